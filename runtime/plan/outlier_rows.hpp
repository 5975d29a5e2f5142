// int8 GEMMs that keep the rows one value dominates.
//
// ops' s8 GEMM quantizes each row of A with one scale (its largest magnitude over 127
// levels). That is accurate for an ordinary row, but BERT-family models carry "massive
// activations": all-MiniLM-L6-v2's [CLS] row leaves each LayerNorm with ~28 in channel
// 99 against a median magnitude of ~0.05, so a level is 0.22 wide and most of the row
// rounds to zero. Those rows — about one per sequence — took int8 embeddings to cosine
// 0.983 of fp32 (the empty text, whose mean pools just [CLS] and [SEP]).
//
// Such a row gets a second int8 term: its quantization residual r = a − q(a) (under half
// a level everywhere), quantized with its own scale and multiplied by the same int8
// weights, which carries the row to ~15 bits while every other row stays one int8 pass
// (ops computes it beside the row's tile: GemmEpilogue::two_term_rows).
// Which rows: those whose mean magnitude gets fewer than kOutlierRowMeanLevels of the
// 127 levels, found where a row enters the GEMMs from the residual stream (a LayerNorm's
// output) — decided from the row itself, with no calibration data and no model-specific
// channel list. On all-MiniLM-L6-v2 that is ~2% of the rows ([CLS], some [SEP]).
//
// Results are the same bits on every ISA: the ops GEMMs are, the residual mirrors ops'
// quantizer (q = nearest-even(a·127/max|a|), a level = max|a|/127) in portable code, and
// the row test reads ops::RowMagnitude, summed in one order on every ISA (the LayerNorm
// before the GEMMs takes it as it writes the rows).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "attend/ops/gemm.hpp"
#include "attend/ops/row_magnitude.hpp"

namespace attend::runtime {

// A row whose mean magnitude quantizes to fewer levels than this is an outlier row.
inline constexpr int kOutlierRowMeanLevels = 4;

// Whether ops' per-row quantization leaves the mean magnitude of a row of k values
// with magnitudes m fewer than kOutlierRowMeanLevels levels (false for a zero row and
// for a NaN or inf, which the GEMM reports as NaN).
bool is_outlier(const ops::RowMagnitude& m, std::int64_t k);
bool is_outlier_row(const float* a, std::int64_t k);

// Writes the indices of the outlier rows to `rows` (room for one per row), ascending,
// and returns how many there are: from rows of k values whose magnitudes are given, or
// from a's rows, which `threads` then share (the list is the same whatever their number).
std::int64_t list_outlier_rows(std::span<const ops::RowMagnitude> magnitudes, std::int64_t k, std::int32_t* rows);
std::int64_t find_outlier_rows(ops::ConstMatrix a, std::int32_t* rows, int threads = 1);

// ops::gemm (same arguments) with, for an s8 weight, the second int8 term on the rows
// listed (ops' GemmEpilogue::two_term_rows: each row's term computed with its tile, on
// the weight panel the tile just read): `rows` ascending, each in [first, first +
// a.rows), naming row `r − first` of a and c (a chunk of a larger matrix starts at its
// row `first`). Other weight types: ops::gemm as asked. Throws attend::Error on what
// ops::gemm refuses (a row outside the chunk or out of order among them).
void gemm_keeping_outlier_rows(ops::ConstMatrix a, const ops::PackedWeightView& w, ops::Matrix c,
                               const ops::GemmEpilogue& epilogue, int threads, std::span<const std::int32_t> rows,
                               std::int64_t first);

}  // namespace attend::runtime
