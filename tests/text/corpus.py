"""The differential test's corpus: text a tokenizer meets, generated deterministically.

Every script (Latin with accents, Greek, Cyrillic, Arabic, Hebrew, Devanagari, Thai, CJK,
Hangul, kana), emoji (ZWJ sequences, skin tones, flags, keycaps), combining marks,
control, format and zero-width characters, NBSP and the other Unicode spaces, very long
words, punctuation and symbols, digits, empty and blank lines; and every assigned code
point of Python's Unicode data, in runs. Used by make_tokenizer_fixtures.py (training text,
the stored expected outputs) and differential.py (the live comparison).
"""
import random
import unicodedata

# Letters of each script, as code point ranges (letters only, so words look like words).
SCRIPTS = {
    "latin": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "latin_accents": "àáâãäåæçèéêëìíîïñòóôõöøùúûüýÿßœšžłđğışÀÁÂÄÅÇÈÉÊÑÖØÜŒŠŽŁİĞ",
    "greek": "αβγδεζηθικλμνξοπρστυφχψωάέήίόύώϊϋΐΰςΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩΆΈΉΊΌΎΏ",
    "cyrillic": "абвгдежзийклмнопрстуфхцчшщъыьэюяёАБВГДЕЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯЁіїєґІЇЄҐ",
    "arabic": "ابتثجحخدذرزسشصضطظعغفقكلمنهويءآأؤإئةى",
    "hebrew": "אבגדהוזחטיכךלמםנןסעפףצץקרשת",
    "devanagari": "कखगघङचछजझञटठडढणतथदधनपफबभमयरलवशषसहािीुूेैोौंः्",
    "thai": "กขคฆงจฉชซฌญฎฏฐฑฒณดตถทธนบปผฝพฟภมยรลวศษสหฬอฮะาิีึืุูเแโใไ่้๊๋็์",
    "cjk": "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跟带花快条院变联言权往展该领传近留红治决周保达办运武半候七必城父强步完革深区即求品士转量空甚众技轻程告江语英基派满式李息写呢识极令黄德收脸钱党倒未持取设始版双历越史商千片容研像找友孩站广改议形委早房音火际则首单据导影失拿网香似斯专石若兵弟谁校读志飞观争究包组造落视济喜离虽坏兴",
    "hangul": "가나다라마바사아자차카타파하각난닫랄맘밥삿앙잦찿캌탙팦핳것너더러머버서어저처커터퍼허고노도로모보소오조초코토포호구누두루무부수우주추쿠투푸후그느드르므브스으즈츠크트프흐기니디리미비시이지치키티피히한국어대학교",
    "kana": "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをんがぎぐげござじずぜぞだぢづでどばびぶべぼぱぴぷぺぽゃゅょっアイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワヲンガギグゲゴザジズゼゾダヂヅデドバビブベボパピプペポャュョッー",
}
PUNCTUATION = list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") + list("¡¿«»‹›“”‘’„‚–—…·•§¶†‡′″‰※¢£¥€₹₽©®™°±×÷≈≠≤≥∞√∑∏∫∂∆∇←→↑↓⇒⇔★☆♥♦♣♠✓✗、。「」『』【】〈〉《》・！？（）：；，．٪؟،؛।॥๏")
SPACES = [" ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u1680", "\u2000", "\u2002", "\u2003", "\u2007", "\u2009",
          "\u200a", "\u202f", "\u205f", "\u3000", "\u2028", "\u2029", "\u0085", "\u000b", "\u000c"]
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u200e", "\u200f", "\u202a", "\u202c",
             "\u2066", "\u2069", "\u180e", "\u061c", "\u034f", "\ufe0f", "\ufe0e"]
CONTROLS = [chr(c) for c in list(range(0x00, 0x09)) + list(range(0x0e, 0x20)) + [0x7f] + list(range(0x80, 0xa0))]
COMBINING = [chr(c) for c in range(0x300, 0x370)] + ["\u0483", "\u0591", "\u05b0", "\u064b", "\u0670", "\u093c",
                                                    "\u0e31", "\u20d7", "\u20e3", "\u3099", "\u309a"]
EMOJI = ["😀", "😂", "🥲", "🤖", "👍", "👍🏻", "👍🏽", "👍🏿", "👋🏼", "❤️", "❤", "☺️", "✨", "🔥", "🎉", "🇫🇷",
         "🇯🇵", "🇺🇳", "🏳️‍🌈", "🏴‍☠️", "👨‍👩‍👧‍👦", "👩🏽‍💻", "🧑‍🤝‍🧑", "👁️‍🗨️", "1️⃣", "#️⃣", "©️", "🫠",
         "🫶🏾", "🦀", "🐍", "🌍", "🏴󠁧󠁢󠁳󠁣󠁴󠁿"]
OTHER = ["½", "²", "³", "ⅷ", "①", "㉑", "ﬁ", "ﬀ", "Ⅸ", "Å", "Ω", "ｆｕｌｌｗｉｄｔｈ", "ＡＢＣ１２３", "ｶﾀｶﾅ",
         "㍿", "㎏", "ℌ", "ℕ", "𝐀𝐁𝐂", "𝔘𝔫𝔦", "İstanbul", "ǅ", "ΣΑΣ", "ß", "ẞ", "ǰ", "ŉ", "İ", "K", "Ⅻ",
         "ﷺ", "ﷻ", "ﻼ", "ﭏ", "ㄱㄴㄷ", "각", "é", "é", "Å", "ñ", "ǖ", "ệ", "क़", "ড়", "ำ", "ແ",
         "<s>", "</s>", "<unk>", "<mask>", "<pad>", "[CLS]", "[SEP]", "[MASK]", "[UNK]", "[PAD]", "<|endoftext|>",
         "don't", "I'll", "we've", "it's", "they're", "O'Neil", "'s", "’s", "http://example.com/a?b=1&c=2",
         "user@example.org", "#hashtag", "@mention", "3.14159", "1,000,000", "2024-01-31", "12:30", "$5.00",
         "C++", "e-mail", "--", "...", "?!", "¯\\_(ツ)_/¯", "\ufffd", "\u0000"]


def word(rng, script, lo=1, hi=9):
    return "".join(rng.choice(SCRIPTS[script]) for _ in range(rng.randint(lo, hi)))


def sentence(rng):
    """A line of mixed text: words of one or two scripts with everything else sprinkled in."""
    main = rng.choice(list(SCRIPTS))
    other = rng.choice(list(SCRIPTS))
    parts = []
    for _ in range(rng.randint(1, 24)):
        r = rng.random()
        if r < 0.55:
            parts.append(word(rng, main))
        elif r < 0.65:
            parts.append(word(rng, other))
        elif r < 0.72:
            parts.append(rng.choice(PUNCTUATION) * rng.randint(1, 3))
        elif r < 0.77:
            parts.append(rng.choice(EMOJI))
        elif r < 0.82:
            parts.append(rng.choice(OTHER))
        elif r < 0.85:
            parts.append(word(rng, main) + rng.choice(COMBINING) + word(rng, main, 0, 3))
        elif r < 0.88:
            parts.append(word(rng, main, 1, 4) + rng.choice(INVISIBLE) + word(rng, main, 1, 4))
        elif r < 0.90:
            parts.append(rng.choice(CONTROLS))
        elif r < 0.93:
            parts.append(str(rng.randint(0, 10 ** rng.randint(1, 12))))
        elif r < 0.95:
            parts.append(word(rng, main, 1, 4) + rng.choice(PUNCTUATION) + word(rng, main, 1, 4))
        elif r < 0.97:
            parts.append(word(rng, main).upper() if main in ("latin", "latin_accents", "greek", "cyrillic") else word(rng, main))
        else:
            parts.append(word(rng, main, 60, 400))  # a very long word
    out = ""
    for p in parts:
        out += (rng.choice(SPACES) if rng.random() < 0.15 else " ") + p
    if rng.random() < 0.3:
        out = out.strip(" ")
    return out


def sentences(seed, n):
    rng = random.Random(seed)
    lines = []
    for i in range(n):
        r = rng.random()
        if r < 0.02:
            lines.append("")
        elif r < 0.04:
            lines.append("".join(rng.choice(SPACES + INVISIBLE) for _ in range(rng.randint(1, 6))))
        else:
            lines.append(sentence(rng))
    return lines


def assigned_code_points():
    """Every code point Python's Unicode data assigns (not surrogates), in order."""
    return [c for c in range(0x110000) if not 0xD800 <= c < 0xE000 and unicodedata.category(chr(c)) != "Cn"]


# Blocks of many characters that all behave alike (CJK ideographs, Hangul syllables, ...).
UNIFORM = ("CJK UNIFIED IDEOGRAPH-", "HANGUL SYLLABLE ", "TANGUT ", "EGYPTIAN HIEROGLYPH ", "CUNEIFORM ", "YI SYLLABLE ",
           "ANATOLIAN HIEROGLYPH ", "BAMUM LETTER ", "KHITAN SMALL SCRIPT ", "NUSHU CHARACTER-", "LINEAR B ",
           "CJK COMPATIBILITY IDEOGRAPH-", "CANADIAN SYLLABICS ")


def code_point_lines(run=32, all_alone=True):
    """Every assigned code point: in runs of consecutive ones, and each one alone between
    letters and spaces ("a" c "b c") to see how it splits and joins. all_alone=False
    (ctest's budget): of the uniform blocks every 16th character, of the others every
    one in runs and every fourth alone."""
    cps = assigned_code_points()
    uniform = [unicodedata.name(chr(c), "").startswith(UNIFORM) for c in cps]
    in_runs = cps if all_alone else [c for k, c in enumerate(cps) if k % 16 == 0 or not uniform[k]]
    alone = cps if all_alone else [c for k, c in enumerate(cps) if k % 4 == 0 and not uniform[k]]
    lines = ["".join(chr(c) for c in in_runs[i:i + run]) for i in range(0, len(in_runs), run)]
    for i in range(0, len(alone), run // 2):
        lines.append(" ".join("a" + chr(c) + "b " + chr(c) for c in alone[i:i + run // 2]))
    return lines


def invalid_utf8(seed, n):
    """Byte strings with invalid UTF-8 in them (truncated sequences, stray continuation
    bytes, overlong forms, surrogates, bytes past U+10FFFF) between valid text."""
    rng = random.Random(seed)
    bad = [b"\x80", b"\xbf", b"\xc0\xaf", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xf0\x9f\x98", b"\xf4\x90\x80\x80",
           b"\xf5", b"\xff", b"\xfe\xff", b"\xe0\x80\x80", b"\xc2\x41", b"\xf0\x80\x80\x80"]
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(1, 6)):
            parts.append(sentence(rng).encode("utf-8")[: rng.randint(0, 40)].decode("utf-8", "ignore").encode())
            parts.append(rng.choice(bad))
        out.append(b" ".join(parts))
    return out
