// Translates standard input line by line with the C++ API.
//   translate_lines MODEL_DIR [MAX_LENGTH] < input.txt
#include <attend/attend.hpp>

#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: translate_lines MODEL_DIR [MAX_LENGTH] < input.txt\n";
    return 2;
  }
  try {
    const attend::Model model = attend::Model::load(argv[1]);  // load once, share freely
    const attend::Translator translator(model);                // thread-safe
    attend::TranslationOptions options;
    options.beam_size = 1;
    if (argc > 2) options.max_length = std::stoi(argv[2]);

    std::vector<std::string> lines;
    for (std::string line; std::getline(std::cin, line);) lines.push_back(line);
    for (const attend::TranslationResult& result : translator.translate_text(lines, options))
      std::cout << result.hypotheses[0].text << '\n';
  } catch (const attend::Error& e) {
    std::cerr << "translate_lines: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
