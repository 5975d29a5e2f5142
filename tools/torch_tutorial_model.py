"""The encoder-decoder model of PyTorch's nn.Transformer translation tutorial.

`Seq2SeqTransformer`, `TokenEmbedding` and `PositionalEncoding` are the tutorial's
(https://pytorch.org/tutorials/beginner/translation_transformer.html), with two knobs
the tutorial leaves at their defaults exposed: `norm_first` and `activation`.
Special ids as in the tutorial: UNK 0, PAD 1, BOS 2, EOS 3.

Shared by tools/convert_torch.py and tools/reference.py. Needs PyTorch (Debian's
python3-torch, 1.13).
"""
import math

import torch
from torch import nn
from torch.nn import Transformer

UNK_IDX, PAD_IDX, BOS_IDX, EOS_IDX = 0, 1, 2, 3


class PositionalEncoding(nn.Module):
    def __init__(self, emb_size: int, dropout: float, maxlen: int = 5000):
        super().__init__()
        den = torch.exp(-torch.arange(0, emb_size, 2) * math.log(10000) / emb_size)
        pos = torch.arange(0, maxlen).reshape(maxlen, 1)
        pos_embedding = torch.zeros((maxlen, emb_size))
        pos_embedding[:, 0::2] = torch.sin(pos * den)
        pos_embedding[:, 1::2] = torch.cos(pos * den)
        pos_embedding = pos_embedding.unsqueeze(-2)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pos_embedding", pos_embedding)

    def forward(self, token_embedding):
        return self.dropout(token_embedding + self.pos_embedding[: token_embedding.size(0), :])


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size: int, emb_size):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_size)
        self.emb_size = emb_size

    def forward(self, tokens):
        return self.embedding(tokens.long()) * math.sqrt(self.emb_size)


class Seq2SeqTransformer(nn.Module):
    def __init__(self, num_encoder_layers, num_decoder_layers, emb_size, nhead, src_vocab_size, tgt_vocab_size,
                 dim_feedforward=512, dropout=0.1, norm_first=False, activation="relu", maxlen=5000):
        super().__init__()
        self.transformer = Transformer(d_model=emb_size, nhead=nhead, num_encoder_layers=num_encoder_layers,
                                       num_decoder_layers=num_decoder_layers, dim_feedforward=dim_feedforward,
                                       dropout=dropout, activation=activation, norm_first=norm_first)
        self.generator = nn.Linear(emb_size, tgt_vocab_size)
        self.src_tok_emb = TokenEmbedding(src_vocab_size, emb_size)
        self.tgt_tok_emb = TokenEmbedding(tgt_vocab_size, emb_size)
        self.positional_encoding = PositionalEncoding(emb_size, dropout=dropout, maxlen=maxlen)

    def encode(self, src, src_mask, src_padding_mask=None):
        return self.transformer.encoder(self.positional_encoding(self.src_tok_emb(src)), src_mask,
                                        src_key_padding_mask=src_padding_mask)

    def decode(self, tgt, memory, tgt_mask, memory_key_padding_mask=None):
        return self.transformer.decoder(self.positional_encoding(self.tgt_tok_emb(tgt)), memory, tgt_mask,
                                        memory_key_padding_mask=memory_key_padding_mask)


def hyperparameters(state_dict):
    """What a state dict tells about the architecture (not nhead, norm_first, activation)."""
    enc = {int(k.split(".")[3]) for k in state_dict if k.startswith("transformer.encoder.layers.")}
    dec = {int(k.split(".")[3]) for k in state_dict if k.startswith("transformer.decoder.layers.")}
    src_vocab, emb = state_dict["src_tok_emb.embedding.weight"].shape
    return dict(num_encoder_layers=len(enc), num_decoder_layers=len(dec), emb_size=emb, src_vocab_size=src_vocab,
                tgt_vocab_size=state_dict["tgt_tok_emb.embedding.weight"].shape[0],
                dim_feedforward=state_dict["transformer.encoder.layers.0.linear1.weight"].shape[0],
                maxlen=state_dict["positional_encoding.pos_embedding"].shape[0])


def load(checkpoint, nhead, norm_first=False, activation="relu"):
    """A Seq2SeqTransformer in eval mode from a state-dict checkpoint (or a state dict)."""
    state = checkpoint if isinstance(checkpoint, dict) else torch.load(checkpoint, map_location="cpu")
    if "state_dict" in state and not any(k.startswith("transformer.") for k in state):
        state = state["state_dict"]
    model = Seq2SeqTransformer(nhead=nhead, norm_first=norm_first, activation=activation, dropout=0.0,
                               **hyperparameters(state))
    model.load_state_dict(state)
    return model.eval()
