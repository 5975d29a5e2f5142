/* Translates standard input line by line with the C API.
 *   translate_lines_c MODEL_DIR [MAX_LENGTH] < input.txt */
#include <attend/attend.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  attend_model* model = NULL;
  attend_translator* translator = NULL;
  attend_options options;
  char line[4096];
  if (argc < 2) return fprintf(stderr, "usage: translate_lines_c MODEL_DIR [MAX_LENGTH] < input.txt\n"), 2;
  if (attend_model_load(argv[1], NULL, &model) != ATTEND_OK ||
      attend_translator_create(model, NULL, &translator) != ATTEND_OK)
    return fprintf(stderr, "translate_lines_c: %s\n", attend_last_error()), 1;
  attend_model_free(model); /* the translator keeps what it needs */
  attend_options_init(&options);
  if (argc > 2) options.max_length = atoi(argv[2]);

  while (fgets(line, sizeof line, stdin) != NULL) {
    const char* source = line;
    attend_result* result = NULL;
    line[strcspn(line, "\r\n")] = '\0';
    if (attend_translate_text(translator, &source, 1, &options, &result) != ATTEND_OK)
      return fprintf(stderr, "translate_lines_c: %s\n", attend_last_error()), 1;
    printf("%s\n", attend_result_text(result, 0, 0));
    attend_result_free(result);
  }
  attend_translator_free(translator);
  return 0;
}
