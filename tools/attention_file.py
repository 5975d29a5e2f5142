"""Reads the .npz files `attend translate --attention-all` writes (attend::save_attention_npz),
for tools/plot_attention.py and tools/attention_view.py.

Each file is one input line: float32 arrays shaped [layers, heads, rows, columns],
  encoder_self  source x source (every model that has an encoder),
  decoder_self  target x target, causal (encoder-decoder models),
  cross         target x source (encoder-decoder models),
with the token strings along their axes. Decoder row t is the decoding step that read
decoder_input_tokens[t] and produced target_tokens[t].
"""
import sys

KINDS = ("encoder_self", "decoder_self", "cross")
TITLES = {"encoder_self": "encoder self-attention", "decoder_self": "decoder self-attention",
          "cross": "cross-attention"}


class AttentionFileError(Exception):
    """A file that cannot be read as attention, or a kind, layer or head it lacks."""


def load(path):
    """The file's arrays as a dict (numpy arrays; tokens as lists of str)."""
    import numpy as np  # Debian's python3-numpy

    try:
        with np.load(path) as z:
            data = {name: z[name] for name in z.files}
    except (OSError, ValueError) as e:
        raise AttentionFileError(f"{path}: not an attention .npz file ({e})") from e
    if not any(kind in data for kind in KINDS):
        raise AttentionFileError(f"{path}: holds none of {', '.join(KINDS)} (write it with attend's --attention-all)")
    for name in ("source_tokens", "target_tokens", "decoder_input_tokens"):
        if name in data:
            data[name] = [str(t) for t in data[name]]
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


def check_layer_head(w, path, kind, layer, head):
    layers, heads = w.shape[0], w.shape[1]
    if layer is not None and not 0 <= layer < layers:
        raise AttentionFileError(f"{path}: --layer {layer}: {kind} has layers 0..{layers - 1}")
    if head is not None and not 0 <= head < heads:
        raise AttentionFileError(f"{path}: --head {head}: {kind} has heads 0..{heads - 1}")


def fail(tool, error):
    sys.exit(f"{tool}: {error}")
