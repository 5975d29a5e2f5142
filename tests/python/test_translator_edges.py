"""attend.Translator at the edges of CTranslate2's API (issue 21): each test pins a
behaviour CTranslate2 4.x has and attend once lacked."""

import pytest

import attend


@pytest.fixture(scope="module")
def translator(translit):
    return attend.Translator(str(translit), device="cpu", intra_threads=1)


NAME = ["آ", "ت", "ز", "م", "و", "ن"]


def test_end_token_none_is_the_models_and_an_empty_list_is_no_end_token(translator):
    default = translator.translate_batch([NAME], max_decoding_length=12)[0].hypotheses[0]
    assert default == ["a", "t", "z", "m", "o", "n"]
    assert translator.translate_batch([NAME], end_token=None, max_decoding_length=12)[0].hypotheses[0] == default
    # No end token: the search runs to max_decoding_length, "</s>" is an ordinary token.
    endless = translator.translate_batch([NAME], end_token=[], max_decoding_length=12)[0].hypotheses[0]
    assert len(endless) == 12 and endless[:6] == default
    # A given end token replaces the model's: the hypothesis stops at "z" (dropped, as </s> is).
    assert translator.translate_batch([NAME], end_token="z")[0].hypotheses[0] == ["a", "t"]
    assert translator.translate_batch([NAME], end_token=["z"], return_end_token=True)[0].hypotheses[0] == ["a", "t", "z"]
