// UTF-8 text as the CLI meets it in input lines and writes it in output lines: validity
// and repair, and making any text safe to put on one line — in an output line or in a
// message. (Blank lines: attend::is_blank_text.)
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace attend::cli {

// Offset of the first byte that does not start or continue a valid UTF-8 sequence
// (overlongs, surrogates and code points past U+10FFFF are invalid), or nullopt.
std::optional<std::size_t> first_invalid_utf8(const std::string& s);
// `s` with every invalid sequence replaced by U+FFFD.
std::string repair_utf8(const std::string& s);

// `s` made to fit on one output line: line breaks and other control characters are
// written as escapes — LF `\n`, CR `\r`, the other C0 controls and DEL `\xHH`, the
// Unicode line breaks NEL, LS and PS `\u0085` `\u2028` `\u2029`. TAB and everything
// else are kept; backslashes are not doubled, so this is not reversible: use
// `--output-format ids` to get the exact output.
std::string one_line(const std::string& s);

// At most about `max_bytes` of `s` for a message, on one line and valid UTF-8: escaped
// as one_line() does, invalid bytes as `\xHH`, cut at a character boundary with "…"
// and the full length when longer.
std::string excerpt(const std::string& s, std::size_t max_bytes = 40);

}  // namespace attend::cli
