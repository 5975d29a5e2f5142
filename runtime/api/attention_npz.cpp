// save_attention_npz: one sentence's attention as a NumPy .npz, written with no library.
// An .npz is a zip of .npy files; entries are stored uncompressed (method 0) with their
// CRC-32, so np.load reads them, and memory-maps nothing it need not. Each .npy is
// format 1.0: magic, a Python-literal header padded to a multiple of 64 bytes, the
// little-endian data. The arrays are written from where they lie, never copied.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attend/attend.hpp"

namespace attend {
namespace {

std::uint32_t crc32_update(std::uint32_t crc, const void* data, std::size_t n) {
  static const auto table = [] {
    std::vector<std::uint32_t> t(256);
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  for (std::size_t i = 0; i < n; ++i) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

// UTF-8 → code points; a malformed sequence becomes U+FFFD (vocabulary tokens are UTF-8,
// but a byte-level token may hold part of a character).
std::u32string code_points(std::string_view s) {
  std::u32string out;
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const int extra = b < 0x80 ? 0 : (b >> 5) == 6 ? 1 : (b >> 4) == 14 ? 2 : (b >> 3) == 30 ? 3 : -1;
    char32_t c = extra == 0 ? b : extra == 1 ? b & 0x1f : extra == 2 ? b & 0x0f : b & 0x07;
    bool ok = extra >= 0 && i + static_cast<std::size_t>(extra) < s.size();
    for (int k = 1; ok && k <= extra; ++k) {
      const auto next = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
      ok = (next & 0xc0) == 0x80;
      c = (c << 6) | (next & 0x3f);
    }
    if (!ok || c > 0x10ffff) {
      out.push_back(0xfffd);
      ++i;
      continue;
    }
    out.push_back(c);
    i += 1 + static_cast<std::size_t>(extra);
  }
  return out;
}

// One array of the archive: its .npy header and a view of its data.
struct Entry {
  std::string name;  // "cross.npy"
  std::string header;
  const void* data = nullptr;
  std::size_t bytes = 0;
  std::vector<char> owned;  // data made here (token strings as UTF-32)
};

std::string npy_header(const std::string& descr, const std::vector<std::int64_t>& shape) {
  std::string dims = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) dims += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
  dims += ")";
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + dims + ", }";
  const std::size_t fixed = 10;  // magic (6), version (2), header length (2)
  dict.append((64 - (fixed + dict.size() + 1) % 64) % 64, ' ');
  dict += '\n';
  std::string h("\x93NUMPY\x01\x00", 8);
  h += static_cast<char>(dict.size() & 0xff);
  h += static_cast<char>(dict.size() >> 8);
  return h + dict;
}

Entry array(std::string name, const std::string& descr, std::vector<std::int64_t> shape, const void* data,
            std::size_t bytes) {
  return {std::move(name) + ".npy", npy_header(descr, shape), data, bytes, {}};
}

Entry maps_entry(const char* name, const AttentionMaps& m) {
  if (m.weights.size() != static_cast<std::size_t>(m.layers * m.heads * m.rows * m.columns))
    throw error_of("save_attention_npz: ", name, " holds ", m.weights.size(), " weights, not ", m.layers, " × ", m.heads,
                   " × ", m.rows, " × ", m.columns);
  return array(name, "<f4", {m.layers, m.heads, m.rows, m.columns}, m.weights.data(), m.weights.size() * 4);
}

// Strings as NumPy's fixed-width UTF-32 '<UN'; `scalar`: one string as a 0-d array
// (np.load gives it back as str(z[name])).
Entry strings_entry(const char* name, const std::vector<std::string>& tokens, bool scalar = false) {
  std::vector<std::u32string> points;
  std::size_t width = 1;  // NumPy's '<U0' is not a type
  for (const auto& t : tokens) width = std::max(width, points.emplace_back(code_points(t)).size());
  const std::vector<std::int64_t> shape =
      scalar ? std::vector<std::int64_t>{} : std::vector<std::int64_t>{static_cast<std::int64_t>(tokens.size())};
  Entry e = array(name, "<U" + std::to_string(width), shape, nullptr, 0);
  e.owned.assign(tokens.size() * width * 4, 0);
  for (std::size_t i = 0; i < points.size(); ++i)
    for (std::size_t k = 0; k < points[i].size(); ++k)
      for (int byte = 0; byte < 4; ++byte)
        e.owned[(i * width + k) * 4 + static_cast<std::size_t>(byte)] = static_cast<char>((points[i][k] >> (8 * byte)) & 0xff);
  e.data = e.owned.data(), e.bytes = e.owned.size();
  return e;
}

Entry ids_entry(const char* name, const std::vector<std::int32_t>& ids) {
  return array(name, "<i4", {static_cast<std::int64_t>(ids.size())}, ids.data(), ids.size() * 4);
}

// Little-endian fields of the zip headers.
void put16(std::string& s, std::uint32_t v) { s += static_cast<char>(v & 0xff), s += static_cast<char>((v >> 8) & 0xff); }
void put32(std::string& s, std::uint32_t v) { put16(s, v & 0xffff), put16(s, v >> 16); }

// The fields local and central headers share: version 2.0, no flags, stored, 1980-01-01.
void common_fields(std::string& s, std::uint32_t crc, std::uint32_t size, std::size_t name_length) {
  put16(s, 20), put16(s, 0), put16(s, 0), put16(s, 0), put16(s, 0x21);
  put32(s, crc), put32(s, size), put32(s, size);
  put16(s, static_cast<std::uint32_t>(name_length)), put16(s, 0);
}

class ArchiveFile {
 public:
  explicit ArchiveFile(const std::string& path) : path_(path), file_(std::fopen(path.c_str(), "wb")) {
    if (file_ == nullptr) fail();
  }
  ~ArchiveFile() {
    if (file_ != nullptr) std::fclose(file_);
  }
  void write(const void* data, std::size_t n) {
    if (n > 0 && std::fwrite(data, 1, n, file_) != n) fail();
    offset_ += n;
  }
  void write(const std::string& s) { write(s.data(), s.size()); }
  std::uint64_t offset() const { return offset_; }
  void close() {
    const bool flushed = std::fflush(file_) == 0 && std::ferror(file_) == 0;
    const int error = errno;
    const bool closed = std::fclose(file_) == 0;
    file_ = nullptr;
    if (!flushed || !closed) {
      if (!flushed) errno = error;
      fail();
    }
  }

 private:
  [[noreturn]] void fail() {
    const std::string why = std::strerror(errno);
    if (file_ != nullptr) std::fclose(file_), file_ = nullptr;
    struct stat st {};
    if (::stat(path_.c_str(), &st) == 0 && S_ISREG(st.st_mode)) std::remove(path_.c_str());  // no half-written archive
    throw error_of("cannot write the attention file ", path_, ": ", why);
  }

  std::string path_;
  std::FILE* file_;
  std::uint64_t offset_ = 0;
};

}  // namespace

void save_attention_npz(const AttentionHeads& heads, const std::string& path, std::int64_t line) {
  for (const auto& [name, ids] : {std::pair{"source_type_ids", &heads.source_type_ids},
                                  std::pair{"source_sequence_ids", &heads.source_sequence_ids}})
    if (!ids->empty() && ids->size() != heads.source_ids.size())
      throw error_of("save_attention_npz: ", path, ": ", name, " holds ", ids->size(), " ids for ",
                     heads.source_ids.size(), " source tokens");
  std::vector<Entry> entries;
  if (heads.encoder_self.layers > 0) entries.push_back(maps_entry("encoder_self", heads.encoder_self));
  if (heads.decoder_self.layers > 0) entries.push_back(maps_entry("decoder_self", heads.decoder_self));
  if (heads.cross.layers > 0) entries.push_back(maps_entry("cross", heads.cross));
  entries.push_back(ids_entry("source_ids", heads.source_ids));
  entries.push_back(strings_entry("source_tokens", heads.source_tokens));
  if (heads.decoder_self.layers > 0 || heads.cross.layers > 0) {
    entries.push_back(ids_entry("target_ids", heads.target_ids));
    entries.push_back(ids_entry("decoder_input_ids", heads.decoder_input_ids));
    entries.push_back(strings_entry("target_tokens", heads.target_tokens));
    entries.push_back(strings_entry("decoder_input_tokens", heads.decoder_input_tokens));
  }
  // What the maps are of (the pages and pictures name it): type and sequence ids mark a
  // pair's sentences A and B and the tokenizer's special tokens.
  if (!heads.source_type_ids.empty()) entries.push_back(ids_entry("source_type_ids", heads.source_type_ids));
  if (!heads.source_sequence_ids.empty()) entries.push_back(ids_entry("source_sequence_ids", heads.source_sequence_ids));
  if (!heads.source_texts.empty()) entries.push_back(strings_entry("source_texts", heads.source_texts));
  if (!heads.model.empty()) entries.push_back(strings_entry("model", {heads.model}, true));
  if (line >= 0) entries.push_back(array("line", "<i8", {}, &line, sizeof line));

  ArchiveFile file(path);
  std::string central;
  for (const Entry& e : entries) {
    const std::uint64_t size = e.header.size() + e.bytes;
    if (size >= 0xffffffffu || file.offset() + size >= 0xffffffffu)
      throw error_of("save_attention_npz: ", path, ": ", e.name, " makes the archive larger than the 4 GiB an .npz ",
                     "without Zip64 holds (a shorter sentence, or fewer layers, fits)");
    const std::uint32_t crc = crc32_update(crc32_update(0, e.header.data(), e.header.size()), e.data, e.bytes);
    const auto offset = static_cast<std::uint32_t>(file.offset());
    std::string local;
    put32(local, 0x04034b50);
    common_fields(local, crc, static_cast<std::uint32_t>(size), e.name.size());
    file.write(local + e.name + e.header);
    file.write(e.data, e.bytes);
    put32(central, 0x02014b50);
    put16(central, 20);  // made by: version 2.0
    common_fields(central, crc, static_cast<std::uint32_t>(size), e.name.size());
    put16(central, 0), put16(central, 0), put16(central, 0), put32(central, 0);  // comment, disk, attributes
    put32(central, offset);
    central += e.name;
  }
  const auto directory = static_cast<std::uint32_t>(file.offset());
  std::string end;
  put32(end, 0x06054b50);
  put16(end, 0), put16(end, 0);
  put16(end, static_cast<std::uint32_t>(entries.size())), put16(end, static_cast<std::uint32_t>(entries.size()));
  put32(end, static_cast<std::uint32_t>(central.size())), put32(end, directory);
  put16(end, 0);
  file.write(central + end);
  file.close();
}

}  // namespace attend
