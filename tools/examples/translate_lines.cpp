// Translates standard input line by line with the C++ API, as `attend translate` does:
// one output line per input line; lines longer than the model's limit are truncated
// (TranslationOptions::max_input_length); an empty line gives an empty line; line
// breaks inside a translation are escaped.
//   translate_lines MODEL_DIR [MAX_LENGTH] < input.txt
#include <attend/attend.hpp>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace {

// One output line, as the CLI writes it: \n, \r, other control characters (\xHH) and
// the Unicode line breaks NEL, LS, PS (\u0085, \u2028, \u2029) escaped.
std::string one_line(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    char escape[8] = "";
    if (c == '\n') std::snprintf(escape, sizeof escape, "\\n");
    else if (c == '\r') std::snprintf(escape, sizeof escape, "\\r");
    else if ((c < 0x20 && c != '\t') || c == 0x7f) std::snprintf(escape, sizeof escape, "\\x%02X", c);
    else if (s.compare(i, 2, "\xC2\x85") == 0) std::snprintf(escape, sizeof escape, "\\u0085"), i += 1;
    else if (s.compare(i, 3, "\xE2\x80\xA8") == 0) std::snprintf(escape, sizeof escape, "\\u2028"), i += 2;
    else if (s.compare(i, 3, "\xE2\x80\xA9") == 0) std::snprintf(escape, sizeof escape, "\\u2029"), i += 2;
    if (escape[0] != '\0') out += escape;
    else out += s[i];
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: translate_lines MODEL_DIR [MAX_LENGTH] < input.txt\n";
    return 2;
  }
  try {
    const attend::Model model = attend::Model::load(argv[1]);  // load once, share freely
    const attend::Translator translator(model);                // thread-safe
    attend::TranslationOptions options;                        // max_input_length: over-long lines are cut
    options.beam_size = 1;
    if (argc > 2) options.max_length = std::stoi(argv[2]);

    std::vector<std::string> lines;
    for (std::string line; std::getline(std::cin, line);) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      lines.push_back(line);
    }
    for (const attend::TranslationResult& result : translator.translate_text(lines, options))
      std::cout << one_line(result.hypotheses[0].text) << '\n';  // hypotheses[0] always exists
  } catch (const attend::Error& e) {
    std::cerr << "translate_lines: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
