#include "test_support.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>

namespace attend::test {

std::uint64_t test_seed() {
  static const std::uint64_t seed = [] {
    if (const char* env = std::getenv("ATTEND_TEST_SEED")) return std::uint64_t{std::strtoull(env, nullptr, 10)};
    const std::uint64_t s = (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
    std::cerr << "attend tests: random seed " << s << " (replay with ATTEND_TEST_SEED=" << s << ")\n";
    return s;
  }();
  return seed;
}

namespace {
constexpr std::uint32_t kPoisonBits = 0x7fa5a5a5u;
}

float poison_value() {
  float f;
  std::memcpy(&f, &kPoisonBits, sizeof f);
  return f;
}

bool is_poison(float v) {
  std::uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits == kPoisonBits;
}

Buffer2D::Buffer2D(index_t rows, index_t cols, index_t pad)
    : rows_(rows), cols_(cols), ld_(cols + pad), storage_(static_cast<size_t>(std::max<index_t>(rows * (cols + pad), 1)), poison_value()) {}

void Buffer2D::fill_random(Rng& rng, float lo, float hi) {
  for (index_t r = 0; r < rows_; ++r)
    for (index_t c = 0; c < cols_; ++c) at(r, c) = rng.uniform(lo, hi);
}

void Buffer2D::copy_from(const Buffer2D& other) { storage_ = other.storage_; }

void Buffer2D::poison() { std::fill(storage_.begin(), storage_.end(), poison_value()); }

bool Buffer2D::all_written() const {
  for (index_t r = 0; r < rows_; ++r)
    for (index_t c = 0; c < cols_; ++c)
      if (is_poison(at(r, c))) return false;
  return true;
}

bool Buffer2D::padding_intact() const {
  for (index_t r = 0; r < rows_; ++r)
    for (index_t c = cols_; c < ld_; ++c)
      if (!is_poison(at(r, c))) return false;
  return true;
}

double max_absolute_error(ops::ConstMatrix got, ops::ConstMatrix ref) {
  double err = 0.0;
  for (index_t r = 0; r < ref.rows; ++r)
    for (index_t c = 0; c < ref.cols; ++c) {
      const double g = got(r, c), e = ref(r, c);
      if (std::isfinite(e) && !std::isfinite(g)) return std::numeric_limits<double>::infinity();
      if (std::isinf(e) && g == e) continue;
      err = std::max(err, std::abs(g - e));
    }
  return err;
}

double max_relative_error(ops::ConstMatrix got, ops::ConstMatrix ref) {
  double scale = 0.0;
  for (index_t r = 0; r < ref.rows; ++r)
    for (index_t c = 0; c < ref.cols; ++c)
      if (std::isfinite(ref(r, c))) scale = std::max(scale, std::abs(double(ref(r, c))));
  // Floor: when every expected value is tiny (e.g. GeLU far in its negative tail, where
  // fp32 is exactly 0 and double is 1e-32) the error is judged in absolute terms.
  return max_absolute_error(got, ref) / std::max(scale, 1e-6);
}

}  // namespace attend::test
