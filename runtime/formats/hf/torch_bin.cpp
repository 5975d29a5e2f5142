#include "formats/hf/torch_bin.hpp"

#include <cstring>
#include <deque>
#include <limits>
#include <optional>

#include "attend/error.hpp"

namespace attend::runtime {
namespace {

constexpr std::size_t kMaxValues = 1u << 24;  // pickle objects: a state dict has a few per tensor
constexpr std::size_t kMaxDims = 16;

std::uint64_t little_endian(const std::byte* p, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | std::to_integer<std::uint64_t>(p[i]);
  return v;
}

// ---- the zip container ----

struct ZipEntry {
  std::size_t offset = 0, size = 0;  // of the stored data, within the file
};

class Zip {
 public:
  Zip(std::span<const std::byte> file, const std::string& origin) : file_(file), origin_(origin) { read_directory(); }
  const std::map<std::string, ZipEntry>& entries() const { return entries_; }

 private:
  [[noreturn]] void corrupt(const std::string& why) const { throw error_of(origin_, ": not a valid zip archive (", why, ")"); }
  std::uint64_t at(std::uint64_t offset, int bytes) const {
    if (offset > file_.size() || file_.size() - offset < static_cast<std::uint64_t>(bytes)) corrupt("a record runs past the end of the file");
    return little_endian(file_.data() + offset, bytes);
  }

  void read_directory() {
    // The end-of-central-directory record: within the last 64 KiB + 22 bytes.
    if (file_.size() < 22) corrupt("too short");
    std::optional<std::uint64_t> eocd;
    const std::uint64_t lowest = file_.size() > 65557 ? file_.size() - 65557 : 0;
    for (std::uint64_t p = file_.size() - 22 + 1; p-- > lowest;)
      if (at(p, 4) == 0x06054b50) {
        eocd = p;
        break;
      }
    if (!eocd) corrupt("no end-of-central-directory record");
    std::uint64_t count = at(*eocd + 10, 2), size = at(*eocd + 12, 4), offset = at(*eocd + 16, 4);
    if ((count == 0xffff || size == 0xffffffff || offset == 0xffffffff) && *eocd >= 20 && at(*eocd - 20, 4) == 0x07064b50) {
      const std::uint64_t record = at(*eocd - 20 + 8, 8);
      if (at(record, 4) != 0x06064b50) corrupt("bad zip64 end-of-central-directory record");
      count = at(record + 32, 8), size = at(record + 40, 8), offset = at(record + 48, 8);
    }
    if (offset > file_.size() || size > file_.size() - offset) corrupt("the central directory lies outside the file");
    if (count > size / 46) corrupt("more entries than the central directory can hold");
    std::uint64_t p = offset;
    for (std::uint64_t i = 0; i < count; ++i) {
      if (at(p, 4) != 0x02014b50) corrupt("bad central directory entry");
      const std::uint64_t method = at(p + 10, 2), name_length = at(p + 28, 2), extra_length = at(p + 30, 2),
                          comment_length = at(p + 32, 2);
      std::uint64_t compressed = at(p + 20, 4), stored = at(p + 24, 4), local = at(p + 42, 4);
      if (p + 46 + name_length > file_.size()) corrupt("an entry name runs past the end of the file");
      const std::string name(reinterpret_cast<const char*>(file_.data() + p + 46), name_length);
      // zip64: the fields that overflowed, in this order, in extra field 0x0001.
      for (std::uint64_t e = p + 46 + name_length, end = e + extra_length; e + 4 <= end;) {
        const std::uint64_t id = at(e, 2), length = at(e + 2, 2);
        if (e + 4 + length > end) corrupt("an extra field runs past its entry");
        if (id == 1) {
          std::uint64_t q = e + 4;
          auto next = [&](std::uint64_t& field) {
            if (field != 0xffffffff) return;
            if (q + 8 > e + 4 + length) corrupt("a short zip64 extra field");
            field = at(q, 8), q += 8;
          };
          next(stored), next(compressed), next(local);
        }
        e += 4 + length;
      }
      if (method != 0)
        throw error_of(origin_, ": zip entry '", name, "' is compressed (method ", method,
                       "); torch.save stores its entries uncompressed — attend reads them in place");
      if (compressed != stored) corrupt("entry '" + name + "' has different stored and compressed sizes");
      if (at(local, 4) != 0x04034b50) corrupt("entry '" + name + "' has no local header");
      const std::uint64_t data = local + 30 + at(local + 26, 2) + at(local + 28, 2);
      if (data > file_.size() || stored > file_.size() - data) corrupt("entry '" + name + "' runs past the end of the file");
      entries_[name] = {static_cast<std::size_t>(data), static_cast<std::size_t>(stored)};
      p += 46 + name_length + extra_length + comment_length;
    }
  }

  std::span<const std::byte> file_;
  const std::string& origin_;
  std::map<std::string, ZipEntry> entries_;
};

// ---- the pickle interpreter ----

enum class Kind { none, boolean, integer, real, string, tuple, list, dict, global, storage, tensor, mark };

struct StorageRef {
  std::string key, type;  // "FloatStorage", …
  std::uint64_t numel = 0;
};

struct TensorView {
  std::uint32_t storage = 0;  // the storage value
  std::uint64_t offset = 0;
  std::vector<std::uint64_t> size, stride;
};

struct Value {
  explicit Value(Kind k = Kind::none) : kind(k) {}
  Kind kind;
  std::int64_t integer = 0;
  double real = 0;
  std::string text;                    // string; global: "module.name"
  std::vector<std::uint32_t> items;    // tuple, list; dict: key, value, key, value…
  StorageRef storage;
  TensorView tensor;
};

class Unpickler {
 public:
  Unpickler(std::span<const std::byte> bytes, const std::string& origin, std::deque<Value>& heap, bool legacy_storage)
      : bytes_(bytes), origin_(origin), heap_(heap), legacy_storage_(legacy_storage) {}

  // Runs to STOP; returns the value and the bytes consumed.
  std::uint32_t run() {
    while (true) {
      const int op = static_cast<int>(byte());
      switch (op) {
        case 0x80: byte(); break;                                 // PROTO
        case 0x95: take(8); break;                                // FRAME
        case '.': return pop();                                   // STOP
        case '(': stack_.push_back(make(Value(Kind::mark))); break;    // MARK
        case 'N': stack_.push_back(make(Value(Kind::none))); break;
        case 0x88: stack_.push_back(boolean(true)); break;        // NEWTRUE
        case 0x89: stack_.push_back(boolean(false)); break;       // NEWFALSE
        case 'K': stack_.push_back(integer(static_cast<std::int64_t>(little_endian(take(1), 1)))); break;
        case 'M': stack_.push_back(integer(static_cast<std::int64_t>(little_endian(take(2), 2)))); break;
        case 'J': stack_.push_back(integer(static_cast<std::int32_t>(little_endian(take(4), 4)))); break;
        case 0x8a: stack_.push_back(long1()); break;              // LONG1
        case 'G': stack_.push_back(binfloat()); break;
        case 'X': stack_.push_back(string(little_endian(take(4), 4))); break;  // BINUNICODE
        case 0x8c: stack_.push_back(string(little_endian(take(1), 1))); break; // SHORT_BINUNICODE
        case ')': stack_.push_back(make(Value(Kind::tuple))); break;   // EMPTY_TUPLE
        case ']': stack_.push_back(make(Value(Kind::list))); break;    // EMPTY_LIST
        case '}': stack_.push_back(make(Value(Kind::dict))); break;    // EMPTY_DICT
        case 't': stack_.push_back(sequence(Kind::tuple, pop_mark())); break;
        case 'l': stack_.push_back(sequence(Kind::list, pop_mark())); break;
        case 0x85: stack_.push_back(sequence(Kind::tuple, pop_n(1))); break;
        case 0x86: stack_.push_back(sequence(Kind::tuple, pop_n(2))); break;
        case 0x87: stack_.push_back(sequence(Kind::tuple, pop_n(3))); break;
        case 'a': append(pop_n(1)); break;
        case 'e': append(pop_mark()); break;
        case 's': set_items(pop_n(2)); break;
        case 'u': set_items(pop_mark()); break;
        case 'q': memo_put(little_endian(take(1), 1)); break;     // BINPUT
        case 'r': memo_put(little_endian(take(4), 4)); break;     // LONG_BINPUT
        case 0x94: memo_put(memo_.size()); break;                 // MEMOIZE
        case 'h': stack_.push_back(memo_get(little_endian(take(1), 1))); break;
        case 'j': stack_.push_back(memo_get(little_endian(take(4), 4))); break;
        case 'c': {  // GLOBAL "module\nname\n" (read in that order)
          const std::string module = line();
          stack_.push_back(global_of(module, line()));
          break;
        }
        case 0x93: {  // STACK_GLOBAL
          const std::uint32_t name = pop(), module = pop();
          stack_.push_back(global_of(text_of(module), text_of(name)));
          break;
        }
        case 'Q': stack_.push_back(persistent(pop())); break;     // BINPERSID
        case 'R': {                                               // REDUCE
          const std::uint32_t args = pop(), callable = pop();
          stack_.push_back(reduce(callable, args));
          break;
        }
        case 'b': {  // BUILD: the state of an OrderedDict (its _metadata) changes nothing read here
          pop();
          if (heap_[top()].kind != Kind::dict && heap_[top()].kind != Kind::tensor)
            refuse("BUILD on something other than a dict or tensor");
          break;
        }
        default: refuse("opcode 0x" + hex(op));
      }
    }
  }
  std::size_t consumed() const { return at_; }

 private:
  [[noreturn]] void refuse(const std::string& what) const {
    throw error_of(origin_, ": pickle ", what, " at byte ", at_ > 0 ? at_ - 1 : 0,
                   " — not part of a state dict of tensors as torch.save writes it; attend runs no other pickle code");
  }
  static std::string hex(int v) {
    const char* digits = "0123456789abcdef";
    return {digits[(v >> 4) & 15], digits[v & 15]};
  }
  std::byte byte() { return *take(1); }
  const std::byte* take(std::uint64_t n) {
    if (n > bytes_.size() - at_) throw error_of(origin_, ": the pickle ends early (truncated file?) at byte ", at_);
    const std::byte* p = bytes_.data() + at_;
    at_ += static_cast<std::size_t>(n);
    return p;
  }
  std::string line() {
    std::string s;
    while (true) {
      const char c = static_cast<char>(byte());
      if (c == '\n') return s;
      if (s.size() > 256) refuse("GLOBAL name longer than 256 bytes");
      s += c;
    }
  }
  std::uint32_t make(Value v) {
    if (heap_.size() >= kMaxValues) refuse("with more than 2^24 objects");
    heap_.push_back(std::move(v));
    return static_cast<std::uint32_t>(heap_.size() - 1);
  }
  std::uint32_t boolean(bool b) {
    Value v(Kind::boolean);
    v.integer = b;
    return make(std::move(v));
  }
  std::uint32_t integer(std::int64_t i) {
    Value v(Kind::integer);
    v.integer = i;
    return make(std::move(v));
  }
  std::uint32_t long1() {
    const std::uint64_t n = little_endian(take(1), 1);
    if (n > 8) {  // only torch.save's magic number is this long; kept as its low bytes
      const std::byte* p = take(n);
      return integer(static_cast<std::int64_t>(little_endian(p, 8)));
    }
    const std::byte* p = take(n);
    std::uint64_t u = n ? little_endian(p, static_cast<int>(n)) : 0;
    if (n > 0 && n < 8 && (std::to_integer<int>(p[n - 1]) & 0x80)) u |= ~std::uint64_t{0} << (8 * n);  // sign-extend
    return integer(static_cast<std::int64_t>(u));
  }
  std::uint32_t binfloat() {
    const std::byte* p = take(8);
    std::uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) bits = (bits << 8) | std::to_integer<std::uint64_t>(p[i]);  // big-endian
    Value v(Kind::real);
    std::memcpy(&v.real, &bits, 8);
    return make(std::move(v));
  }
  std::uint32_t string(std::uint64_t n) {
    const std::byte* p = take(n);
    Value v(Kind::string);
    v.text.assign(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
    return make(std::move(v));
  }
  std::uint32_t pop() {
    if (stack_.empty()) refuse("pops an empty stack");
    const std::uint32_t v = stack_.back();
    stack_.pop_back();
    if (heap_[v].kind == Kind::mark) refuse("pops a MARK");
    return v;
  }
  std::uint32_t top() const {
    if (stack_.empty()) throw error_of(origin_, ": pickle reads an empty stack at byte ", at_);
    return stack_.back();
  }
  std::vector<std::uint32_t> pop_n(std::size_t n) {
    std::vector<std::uint32_t> out(n);
    for (std::size_t i = n; i-- > 0;) out[i] = pop();
    return out;
  }
  std::vector<std::uint32_t> pop_mark() {
    std::vector<std::uint32_t> out;
    while (true) {
      if (stack_.empty()) refuse("without the MARK it needs");
      const std::uint32_t v = stack_.back();
      stack_.pop_back();
      if (heap_[v].kind == Kind::mark) break;
      out.push_back(v);
    }
    return {out.rbegin(), out.rend()};
  }
  std::uint32_t sequence(Kind kind, std::vector<std::uint32_t> items) {
    Value v{kind};
    v.items = std::move(items);
    return make(std::move(v));
  }
  void append(const std::vector<std::uint32_t>& items) {
    Value& list = heap_[top()];
    if (list.kind != Kind::list) refuse("APPEND to something other than a list");
    list.items.insert(list.items.end(), items.begin(), items.end());
  }
  void set_items(const std::vector<std::uint32_t>& items) {
    Value& dict = heap_[top()];
    if (dict.kind != Kind::dict || items.size() % 2 != 0) refuse("SETITEM on something other than a dict");
    dict.items.insert(dict.items.end(), items.begin(), items.end());
  }
  void memo_put(std::uint64_t index) {
    if (index > memo_.size() + kMaxValues) refuse("memo index out of range");
    if (index >= memo_.size()) memo_.resize(static_cast<std::size_t>(index) + 1, UINT32_MAX);
    memo_[static_cast<std::size_t>(index)] = top();
  }
  std::uint32_t memo_get(std::uint64_t index) {
    if (index >= memo_.size() || memo_[static_cast<std::size_t>(index)] == UINT32_MAX) refuse("memo get of an unset index");
    return memo_[static_cast<std::size_t>(index)];
  }
  const std::string& text_of(std::uint32_t v) {
    if (heap_[v].kind != Kind::string) refuse("STACK_GLOBAL of a non-string");
    return heap_[v].text;
  }
  std::uint32_t global_of(const std::string& module, const std::string& name) {
    static const char* storages[] = {"FloatStorage", "HalfStorage", "BFloat16Storage", "DoubleStorage", "LongStorage",
                                     "IntStorage", "ShortStorage", "CharStorage", "ByteStorage", "BoolStorage"};
    bool allowed = (module == "collections" && name == "OrderedDict") ||
                   (module == "torch._utils" && (name == "_rebuild_tensor_v2" || name == "_rebuild_parameter"));
    if (module == "torch")
      for (const char* s : storages) allowed = allowed || name == s;
    if (!allowed) refuse("global '" + module + "." + name + "'");
    Value v(Kind::global);
    v.text = module + "." + name;
    return make(std::move(v));
  }
  // ('storage', torch.XStorage, key, location, numel[, view_metadata])
  std::uint32_t persistent(std::uint32_t id) {
    const Value& t = heap_[id];
    const std::size_t arity = legacy_storage_ ? 6 : 5;
    if (t.kind != Kind::tuple || t.items.size() != arity || heap_[t.items[0]].kind != Kind::string ||
        heap_[t.items[0]].text != "storage" || heap_[t.items[1]].kind != Kind::global ||
        heap_[t.items[2]].kind != Kind::string || heap_[t.items[4]].kind != Kind::integer || heap_[t.items[4]].integer < 0)
      refuse("persistent id that is not a torch storage");
    if (legacy_storage_ && heap_[t.items[5]].kind != Kind::none) refuse("storage view (legacy view_metadata)");
    const std::string& type = heap_[t.items[1]].text;
    if (type.rfind("torch.", 0) != 0) refuse("storage of type '" + type + "'");
    Value v(Kind::storage);
    v.storage = {heap_[t.items[2]].text, type.substr(6), static_cast<std::uint64_t>(heap_[t.items[4]].integer)};
    return make(std::move(v));
  }
  std::vector<std::uint64_t> counts(std::uint32_t tuple, const char* what) {
    const Value& t = heap_[tuple];
    if (t.kind != Kind::tuple || t.items.size() > kMaxDims) refuse(std::string("tensor ") + what + " that is not a tuple of ≤ 16 integers");
    std::vector<std::uint64_t> out;
    for (std::uint32_t i : t.items) {
      if (heap_[i].kind != Kind::integer || heap_[i].integer < 0) refuse(std::string("tensor ") + what + " with a negative or non-integer entry");
      out.push_back(static_cast<std::uint64_t>(heap_[i].integer));
    }
    return out;
  }
  std::uint32_t reduce(std::uint32_t callable, std::uint32_t args) {
    const Value& f = heap_[callable];
    const Value& a = heap_[args];
    if (f.kind != Kind::global || a.kind != Kind::tuple) refuse("REDUCE of something other than a known global");
    if (f.text == "collections.OrderedDict") {
      if (!a.items.empty()) refuse("OrderedDict with arguments");
      return make(Value(Kind::dict));
    }
    if (f.text == "torch._utils._rebuild_parameter") {  // (tensor, requires_grad, hooks)
      if (a.items.size() != 3 || heap_[a.items[0]].kind != Kind::tensor) refuse("_rebuild_parameter of a non-tensor");
      return a.items[0];
    }
    if (f.text == "torch._utils._rebuild_tensor_v2") {  // (storage, offset, size, stride, requires_grad, hooks[, metadata])
      if (a.items.size() < 6 || a.items.size() > 7 || heap_[a.items[0]].kind != Kind::storage ||
          heap_[a.items[1]].kind != Kind::integer || heap_[a.items[1]].integer < 0)
        refuse("_rebuild_tensor_v2 with arguments torch.save does not write");
      Value v(Kind::tensor);
      v.tensor.storage = a.items[0];
      v.tensor.offset = static_cast<std::uint64_t>(heap_[a.items[1]].integer);
      v.tensor.size = counts(a.items[2], "size");
      v.tensor.stride = counts(a.items[3], "stride");
      if (v.tensor.size.size() != v.tensor.stride.size()) refuse("tensor whose size and stride differ in length");
      return make(std::move(v));
    }
    refuse("REDUCE of '" + f.text + "'");
  }

  std::span<const std::byte> bytes_;
  std::size_t at_ = 0;
  const std::string& origin_;
  std::deque<Value>& heap_;
  bool legacy_storage_;
  std::vector<std::uint32_t> stack_, memo_;
};

struct StorageType {
  std::optional<DType> dtype;  // none: an integer buffer (or float64)
  std::size_t element = 0;
  const char* name = "";
};

std::optional<StorageType> storage_type(const std::string& type) {
  static const std::map<std::string, StorageType> types = {
      {"FloatStorage", {DType::f32, 4, "F32"}},   {"HalfStorage", {DType::f16, 2, "F16"}},
      {"BFloat16Storage", {DType::bf16, 2, "BF16"}}, {"DoubleStorage", {std::nullopt, 8, "F64"}},
      {"LongStorage", {std::nullopt, 8, "I64"}},  {"IntStorage", {std::nullopt, 4, "I32"}},
      {"ShortStorage", {std::nullopt, 2, "I16"}}, {"CharStorage", {std::nullopt, 1, "I8"}},
      {"ByteStorage", {std::nullopt, 1, "U8"}},   {"BoolStorage", {std::nullopt, 1, "BOOL"}}};
  const auto it = types.find(type);
  if (it == types.end()) return std::nullopt;
  return it->second;
}

// The state dict's tensors, each checked to lie inside its storage's bytes.
void collect_tensors(const std::deque<Value>& heap, std::uint32_t root, const std::map<std::string, std::span<const std::byte>>& storages,
                     std::span<const std::byte> file, const std::string& origin, TorchBinContents& out) {
  const Value& dict = heap[root];
  if (dict.kind != Kind::dict)
    throw error_of(origin, ": holds a pickled object that is not a dict — attend reads a state dict (name → tensor), as save_pretrained writes it");
  for (std::size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const Value& key = heap[dict.items[i]];
    const Value& value = heap[dict.items[i + 1]];
    if (key.kind != Kind::string) throw error_of(origin, ": state dict key ", i / 2, " is not a string");
    const std::string& name = key.text;
    if (value.kind != Kind::tensor)
      throw error_of(origin, ": entry '", name, "' is not a tensor — attend reads a flat state dict (name → tensor)");
    const TensorView& view = value.tensor;
    const StorageRef& storage = heap[view.storage].storage;
    const auto type = storage_type(storage.type);
    if (!type) throw error_of(origin, ": tensor '", name, "' has storage type '", storage.type, "', which attend does not read");
    const auto bytes = storages.find(storage.key);
    if (bytes == storages.end()) throw error_of(origin, ": tensor '", name, "' refers to storage '", storage.key, "', which the file lacks");
    if (storage.numel > bytes->second.size() / type->element)
      throw error_of(origin, ": storage '", storage.key, "' claims ", storage.numel, " elements but holds ", bytes->second.size(), " bytes");
    // The tensor's extent within its storage, checked without overflow.
    std::uint64_t extent = view.offset + 1, elements = 1;
    bool empty = false, contiguous = true;
    std::uint64_t expected_stride = 1;
    for (std::size_t d = view.size.size(); d-- > 0;) {
      const std::uint64_t n = view.size[d], s = view.stride[d];
      if (n == 0) empty = true;
      if (n > 1 && s != expected_stride) contiguous = false;
      if (n > 0 && s > 0 && (n - 1) > (std::numeric_limits<std::uint64_t>::max() / 4 - extent) / s)
        throw error_of(origin, ": tensor '", name, "' has an impossible size or stride");
      if (n > 0) extent += (n - 1) * s;
      if (n != 0 && elements > std::numeric_limits<std::int64_t>::max() / 8 / n)
        throw error_of(origin, ": tensor '", name, "' is impossibly large");
      elements *= n;
      expected_stride *= std::max<std::uint64_t>(n, 1);
    }
    if (!empty && extent > storage.numel)
      throw error_of(origin, ": tensor '", name, "' reaches element ", extent, " of a storage of ", storage.numel);
    if (!type->dtype) {
      if (type->element == 8 && std::string(type->name) == "F64")
        throw error_of(origin, ": tensor '", name, "' is float64 — attend reads F32, F16 and BF16 weights");
      out.integer_tensors[name] = type->name;
      continue;
    }
    TensorRecord t;
    t.name = name;
    t.dtype = *type->dtype;
    for (std::uint64_t n : view.size) t.shape.push_back(static_cast<std::int64_t>(n));
    const std::byte* base = bytes->second.data();
    if (contiguous || empty) {
      t.data = base + view.offset * type->element;
      t.offset = static_cast<std::size_t>(t.data - file.data());
    } else {  // copied out, element by element in row-major order
      std::vector<std::byte>& copy = out.owned.emplace_back(static_cast<std::size_t>(elements) * type->element);
      std::vector<std::uint64_t> index(view.size.size(), 0);
      for (std::uint64_t e = 0; e < elements; ++e) {
        std::uint64_t at = view.offset;
        for (std::size_t d = 0; d < index.size(); ++d) at += index[d] * view.stride[d];
        std::memcpy(copy.data() + e * type->element, base + at * type->element, type->element);
        for (std::size_t d = index.size(); d-- > 0;) {
          if (++index[d] < view.size[d]) break;
          index[d] = 0;
        }
      }
      t.data = copy.data();
      t.offset = 0;
    }
    out.tensors[name] = std::move(t);
  }
}

// The storages a pickle refers to, by key.
std::vector<const StorageRef*> storages_of(const std::deque<Value>& heap) {
  std::vector<const StorageRef*> out;
  for (const Value& v : heap)
    if (v.kind == Kind::storage) out.push_back(&v.storage);
  return out;
}

TorchBinContents parse_zip(std::span<const std::byte> file, const std::string& origin) {
  const Zip zip(file, origin);
  std::string prefix;
  const ZipEntry* pickle = nullptr;
  for (const auto& [name, entry] : zip.entries())
    if (name == "data.pkl" || name.ends_with("/data.pkl")) {
      if (pickle != nullptr) throw error_of(origin, ": the archive holds more than one data.pkl");
      pickle = &entry;
      prefix = name.substr(0, name.size() - 8);
    }
  if (pickle == nullptr) throw error_of(origin, ": a zip archive without data.pkl — not written by torch.save");
  if (const auto order = zip.entries().find(prefix + "byteorder"); order != zip.entries().end()) {
    const std::string_view text(reinterpret_cast<const char*>(file.data() + order->second.offset), order->second.size);
    if (text != "little") throw error_of(origin, ": byte order '", text, "'; attend reads little-endian tensors");
  }
  std::deque<Value> heap;
  Unpickler u(file.subspan(pickle->offset, pickle->size), origin, heap, false);
  const std::uint32_t root = u.run();
  std::map<std::string, std::span<const std::byte>> storages;
  for (const StorageRef* s : storages_of(heap)) {
    const auto it = zip.entries().find(prefix + "data/" + s->key);
    if (it == zip.entries().end()) throw error_of(origin, ": storage '", s->key, "' has no entry ", prefix, "data/", s->key);
    storages[s->key] = file.subspan(it->second.offset, it->second.size);
  }
  TorchBinContents out;
  out.layout = "zip";
  collect_tensors(heap, root, storages, file, origin, out);
  return out;
}

// Before PyTorch 1.6: magic number, protocol version, system info, the object, the
// storage keys, then the storages in that order (int64 element count, then the bytes).
TorchBinContents parse_legacy(std::span<const std::byte> file, const std::string& origin) {
  std::deque<Value> heap;
  std::size_t at = 0;
  auto next_pickle = [&](bool storages) {
    Unpickler u(file.subspan(at), origin, heap, storages);
    const std::uint32_t v = u.run();
    at += u.consumed();
    return v;
  };
  // The magic number 0x1950a86a20f9469cfc6c, of which the interpreter keeps the low 64 bits.
  const std::uint32_t magic = next_pickle(false);
  if (heap[magic].kind != Kind::integer || static_cast<std::uint64_t>(heap[magic].integer) != 0xa86a20f9469cfc6cULL)
    throw error_of(origin, ": not a torch.save file (the legacy magic number is missing)");
  const std::uint32_t protocol = next_pickle(false);
  if (heap[protocol].kind != Kind::integer || heap[protocol].integer != 1001)
    throw error_of(origin, ": not a torch.save file (no legacy protocol version 1001 after the magic number)");
  const std::uint32_t info = next_pickle(false);
  bool little = false;
  if (heap[info].kind == Kind::dict)
    for (std::size_t i = 0; i + 1 < heap[info].items.size(); i += 2)
      if (heap[heap[info].items[i]].text == "little_endian") little = heap[heap[info].items[i + 1]].integer != 0;
  if (!little) throw error_of(origin, ": saved on a big-endian machine (or without system information); attend reads little-endian tensors");
  const std::uint32_t root = next_pickle(true);
  const std::uint32_t keys = next_pickle(false);
  if (heap[keys].kind != Kind::list) throw error_of(origin, ": the legacy storage key list is missing");
  std::map<std::string, const StorageRef*> by_key;
  for (const StorageRef* s : storages_of(heap)) by_key[s->key] = s;
  std::map<std::string, std::span<const std::byte>> storages;
  for (std::uint32_t k : heap[keys].items) {
    if (heap[k].kind != Kind::string) throw error_of(origin, ": a legacy storage key is not a string");
    const auto it = by_key.find(heap[k].text);
    if (it == by_key.end()) throw error_of(origin, ": storage '", heap[k].text, "' is listed but never used");
    const auto type = storage_type(it->second->type);
    if (!type) throw error_of(origin, ": storage '", heap[k].text, "' has type '", it->second->type, "', which attend does not read");
    if (file.size() - at < 8) throw error_of(origin, ": truncated: storage '", heap[k].text, "' is missing");
    const std::uint64_t numel = little_endian(file.data() + at, 8);
    at += 8;
    if (numel > (file.size() - at) / type->element)
      throw error_of(origin, ": truncated: storage '", heap[k].text, "' needs ", numel, " elements beyond the end of the file");
    storages[heap[k].text] = file.subspan(at, static_cast<std::size_t>(numel * type->element));
    at += static_cast<std::size_t>(numel * type->element);
  }
  TorchBinContents out;
  out.layout = "legacy";
  collect_tensors(heap, root, storages, file, origin, out);
  return out;
}

}  // namespace

TorchBinContents parse_torch_bin(std::span<const std::byte> file, const std::string& origin) {
  if (file.size() >= 4 && little_endian(file.data(), 4) == 0x04034b50) return parse_zip(file, origin);
  if (file.size() >= 2 && std::to_integer<int>(file[0]) == 0x80) return parse_legacy(file, origin);
  throw error_of(origin, ": not a file torch.save writes (neither a zip archive nor a legacy pickle stream)");
}

TorchBinFile::TorchBinFile(const std::string& path) : file_(path), contents_(parse_torch_bin({file_.data(), file_.size()}, path)) {}

const TensorRecord* TorchBinFile::find(const std::string& name) const {
  const auto it = contents_.tensors.find(name);
  return it == contents_.tensors.end() ? nullptr : &it->second;
}

std::vector<std::string> TorchBinFile::names() const {
  std::vector<std::string> out;
  for (const auto& [name, _] : contents_.tensors) out.push_back(name);
  return out;
}

}  // namespace attend::runtime
