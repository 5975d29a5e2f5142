#include "text/hf/sentencepiece_model.hpp"

#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>

#include "attend/error.hpp"

namespace attend::runtime::hf {
namespace {

// Protobuf's wire format: a field is a key (number << 3 | wire type) and a value — a
// varint (0), 8 bytes (1), a length-delimited string or message (2), or 4 bytes (5).
class WireReader {
 public:
  WireReader(std::string_view bytes, const std::string& file) : bytes_(bytes), file_(file) {}

  bool done() const { return at_ >= bytes_.size(); }
  // The next field's number and wire type.
  std::pair<std::uint32_t, int> key() {
    const std::uint64_t k = varint();
    return {static_cast<std::uint32_t>(k >> 3), static_cast<int>(k & 7)};
  }
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (done()) throw bad("a varint runs past the end");
      const auto byte = static_cast<unsigned char>(bytes_[at_++]);
      v |= std::uint64_t(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return v;
    }
    throw bad("a varint is longer than 10 bytes");
  }
  std::string_view bytes() {
    const std::uint64_t n = varint();
    if (n > bytes_.size() - at_) throw bad("a field of " + std::to_string(n) + " bytes runs past the end");
    const std::string_view v = bytes_.substr(at_, n);
    at_ += n;
    return v;
  }
  float fixed32_float() {
    if (bytes_.size() - at_ < 4) throw bad("a float runs past the end");
    float f;
    std::memcpy(&f, bytes_.data() + at_, 4);  // little-endian on x86
    at_ += 4;
    return f;
  }
  void skip(int wire_type) {
    switch (wire_type) {
      case 0: varint(); return;
      case 1: advance(8); return;
      case 2: bytes(); return;
      case 5: advance(4); return;
      default: throw bad("wire type " + std::to_string(wire_type) + " is not one protobuf writes");
    }
  }
  Error bad(const std::string& what) const {
    return error_of(file_, ": not a SentencePiece model (", what, " at byte ", at_, ")");
  }

 private:
  void advance(std::size_t n) {
    if (bytes_.size() - at_ < n) throw bad("a field runs past the end");
    at_ += n;
  }
  std::string_view bytes_;
  std::size_t at_ = 0;
  const std::string& file_;
};

SentencePieceModel::Piece read_piece(std::string_view bytes, const std::string& file) {
  SentencePieceModel::Piece p;
  WireReader r(bytes, file);
  while (!r.done()) {
    const auto [field, type] = r.key();
    if (field == 1 && type == 2) p.piece = r.bytes();
    else if (field == 2 && type == 5) p.score = r.fixed32_float();
    else if (field == 3 && type == 0) p.type = static_cast<SentencePieceModel::PieceType>(r.varint());
    else r.skip(type);
  }
  return p;
}

}  // namespace

SentencePieceModel read_sentencepiece_model(const std::filesystem::path& path) {
  const std::string file = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error_of(file, ": cannot open");
  std::stringstream content;
  content << in.rdbuf();
  const std::string data = content.str();
  SentencePieceModel m;
  WireReader r(data, file);
  while (!r.done()) {
    const auto [field, type] = r.key();
    if (field == 1 && type == 2) {
      m.pieces.push_back(read_piece(r.bytes(), file));
    } else if (field == 2 && type == 2) {  // TrainerSpec
      WireReader t(r.bytes(), file);
      while (!t.done()) {
        const auto [f, ty] = t.key();
        if (f == 3 && ty == 0) m.model_type = static_cast<int>(t.varint());
        else if (f == 40 && ty == 0) m.unk_id = static_cast<std::int32_t>(t.varint());
        else t.skip(ty);
      }
    } else if (field == 3 && type == 2) {  // NormalizerSpec
      WireReader n(r.bytes(), file);
      while (!n.done()) {
        const auto [f, ty] = n.key();
        if (f == 2 && ty == 2) m.precompiled_charsmap = n.bytes();
        else n.skip(ty);
      }
    } else {
      r.skip(type);
    }
  }
  if (m.pieces.empty()) throw error_of(file, ": not a SentencePiece model (no pieces)");
  return m;
}

}  // namespace attend::runtime::hf
