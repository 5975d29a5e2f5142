// Shared test helpers: seeded randomness, poisoned buffers with guard padding, and
// error measures.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "attend/ops/types.hpp"

namespace attend::test {

using ops::index_t;

// The seed of this test run: $ATTEND_TEST_SEED if set, else fresh from the OS (printed
// once to stderr, so a failure can be replayed).
std::uint64_t test_seed();

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : gen_(seed) {}
  float uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(gen_); }
  index_t uniform_int(index_t lo, index_t hi) { return std::uniform_int_distribution<index_t>(lo, hi)(gen_); }
  float normal(float mean, float stddev) { return std::normal_distribution<float>(mean, stddev)(gen_); }
  void fill(std::span<float> out, float lo, float hi) {
    for (float& v : out) v = uniform(lo, hi);
  }
  std::mt19937_64& engine() { return gen_; }

 private:
  std::mt19937_64 gen_;
};

// A NaN with a payload no arithmetic produces: marks memory nobody has written.
float poison_value();
bool is_poison(float v);

// A row-major matrix whose rows are padded (ld = cols + pad). Padding always holds
// poison, so a kernel that reads it produces NaN and one that writes it is caught.
class Buffer2D {
 public:
  Buffer2D() = default;
  Buffer2D(index_t rows, index_t cols, index_t pad = 0);
  index_t rows() const { return rows_; }
  index_t cols() const { return cols_; }
  index_t ld() const { return ld_; }
  float* data() { return storage_.data(); }
  const float* data() const { return storage_.data(); }
  ops::Matrix view() { return {storage_.data(), rows_, cols_, ld_}; }
  ops::ConstMatrix view() const { return {storage_.data(), rows_, cols_, ld_}; }
  float& at(index_t r, index_t c) { return storage_[r * ld_ + c]; }
  float at(index_t r, index_t c) const { return storage_[r * ld_ + c]; }

  void fill_random(Rng& rng, float lo, float hi);  // the elements; padding stays poison
  void copy_from(const Buffer2D& other);           // same shape
  void poison();                                   // elements and padding
  bool all_written() const;                        // no element is poison
  bool padding_intact() const;                     // every padding slot is poison

 private:
  index_t rows_ = 0, cols_ = 0, ld_ = 0;
  std::vector<float> storage_;
};

// max |got − ref| / max(max |ref|, 1e-6) over the matrix (normwise relative error);
// +inf if got has a NaN or inf where ref is finite.
double max_relative_error(ops::ConstMatrix got, ops::ConstMatrix ref);
double max_absolute_error(ops::ConstMatrix got, ops::ConstMatrix ref);

}  // namespace attend::test
