"""Reads the .npz files `attend translate|embed|classify --attention-all` writes
(attend::save_attention_npz), for tools/plot_attention.py and tools/attention_view.py.

Each file is one input line: float32 arrays shaped [layers, heads, rows, columns],
  encoder_self  source x source (every model that has an encoder),
  decoder_self  target x target, causal (encoder-decoder models),
  cross         target x source (encoder-decoder models),
with the token strings along their axes (the model's own tokens: tokenizer.json,
SentencePiece or vocabulary files). Decoder row t is the decoding step that read
decoder_input_tokens[t] and produced target_tokens[t]. Where attend knew them the file
also has `model` (the model directory), `source_texts` (the input text, or a pair's two
texts), `source_type_ids` and `source_sequence_ids` (0 sentence A, 1 sentence B, -1 a
special token the tokenizer added).
"""
import os
import re
import sys

KINDS = ("encoder_self", "decoder_self", "cross")
TITLES = {"encoder_self": "encoder self-attention", "decoder_self": "decoder self-attention",
          "cross": "cross-attention"}
# What rows and columns are, per kind.
AXIS_NAMES = {"encoder_self": ("source", "source"), "decoder_self": ("decoder input", "decoder input"),
              "cross": ("target (produced)", "source")}
STRINGS = ("source_tokens", "target_tokens", "decoder_input_tokens", "source_texts")
# Files without sequence ids (translation, ids given as ids) name special tokens by their
# usual spellings: <s>, </s>, <pad>, <unk>, [CLS], [SEP], [PAD], [MASK], <|endoftext|>.
SPECIAL = re.compile(r"^(<[^<>\s]+>|\[[A-Z_]+\]|<\|[^|\s]+\|>)$")


class AttentionFileError(Exception):
    """A file that cannot be read as attention, or a kind, layer or head it lacks."""


def load(path):
    """The file's arrays as a dict (numpy arrays; tokens and texts as lists of str,
    `model` as a str)."""
    import numpy as np  # Debian's python3-numpy

    try:
        with np.load(path) as z:
            data = {name: z[name] for name in z.files}
    except (OSError, ValueError, EOFError) as e:
        raise AttentionFileError(f"{path}: not an attention .npz file ({e})") from e
    if not any(kind in data for kind in KINDS):
        raise AttentionFileError(f"{path}: holds none of {', '.join(KINDS)} (write it with attend's --attention-all)")
    for name in STRINGS:
        if name in data:
            data[name] = [str(t) for t in data[name]]
    if "model" in data:
        data["model"] = str(data["model"])
    return data


def kinds(data):
    """The kinds of attention the file holds, in KINDS order."""
    return [k for k in KINDS if k in data]


def weights(data, path, kind):
    """[layers, heads, rows, columns] of `kind`, or AttentionFileError naming what the file has."""
    if kind not in data:
        what = "an encoder-only model's file holds encoder_self only" if kind != "encoder_self" else "it has no encoder"
        raise AttentionFileError(f"{path} has no {kind} attention ({what}); it holds: {', '.join(kinds(data))}")
    return data[kind]


def axes(data, kind):
    """(row tokens, column tokens) of `kind`: what each row read or produced, what each column is."""
    source = data.get("source_tokens", [])
    if kind == "encoder_self":
        return source, source
    if kind == "decoder_self":
        inputs = data.get("decoder_input_tokens", [])
        return inputs, inputs
    return data.get("target_tokens", []), source


def source_marks(data):
    """(sentence of each source token: "A", "B" or "" where the input was no pair,
    is-special of each source token). Sequence ids decide where the file has them (a
    text given as text); else type ids mark sentence B from their first 1 (as bertviz's
    sentence_b_start), and special tokens go by their usual spellings."""
    tokens = data.get("source_tokens", [])
    sequence = [int(s) for s in data["source_sequence_ids"]] if "source_sequence_ids" in data else None
    types = [int(t) for t in data["source_type_ids"]] if "source_type_ids" in data else []
    if sequence is not None and len(sequence) == len(tokens):
        special = [s < 0 for s in sequence]
        b_start = sequence.index(1) if 1 in sequence else None
    else:
        special = [bool(SPECIAL.match(t)) for t in tokens]
        b_start = types.index(1) if 1 in types else None
    # Sentence A runs up to B's first token (its [SEP] included), B from there.
    sentence = [""] * len(tokens) if b_start is None else ["A" if i < b_start else "B" for i in range(len(tokens))]
    return sentence, special


def axis_marks(data, kind):
    """((row sentences, row specials), (column sentences, column specials)) of `kind`."""
    source = source_marks(data)
    rows, _ = axes(data, kind)
    target = ([""] * len(rows), [bool(SPECIAL.match(t)) for t in rows])
    if kind == "encoder_self":
        return source, source
    if kind == "decoder_self":
        return target, target
    return target, source


def model_name(data, path):
    """The model's directory name, or the file's where the file does not say."""
    model = data.get("model", "")
    return os.path.basename(os.path.normpath(model)) if model else os.path.basename(path)


def sentence(data):
    """The input as text: the file's own text (a pair as A ‖ B), else the source tokens
    joined as the tokenizers join them (▁ and Ġ start words, ## continues one)."""
    texts = data.get("source_texts", [])
    if texts:
        return " ‖ ".join(texts)
    return detokenize(t for t in data.get("source_tokens", []) if not SPECIAL.match(t))


def detokenize(tokens):
    tokens = list(tokens)
    # SentencePiece (▁) and byte-level BPE (Ġ) mark a word's start, WordPiece (##) its
    # continuation; tokens with neither mark are words of their own.
    marks_start = any(t[:1] in ("▁", "Ġ") for t in tokens)
    out = ""
    for t in tokens:
        if t.startswith("##"):
            out += t[2:]
        elif t[:1] in ("▁", "Ġ"):
            out += " " + t[1:]
        else:
            out += t if marks_start else " " + t
    return out.strip()


def line_of(data):
    return int(data["line"]) if "line" in data else None


def check_layer_head(w, path, kind, layer, head):
    layers, heads = w.shape[0], w.shape[1]
    if layer is not None and not 0 <= layer < layers:
        raise AttentionFileError(f"{path}: --layer {layer}: {kind} has layers 0..{layers - 1}")
    if head is not None and not 0 <= head < heads:
        raise AttentionFileError(f"{path}: --head {head}: {kind} has heads 0..{heads - 1}")


def fail(tool, error):
    sys.exit(f"{tool}: {error}")
