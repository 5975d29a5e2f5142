/* Translates standard input line by line with the C API, as `attend translate` does:
 * one output line per input line, whatever its length; lines longer than the model's
 * limit are truncated (attend_options.max_input_length); an empty line gives an empty
 * line; line breaks inside a translation are escaped.
 *   translate_lines_c MODEL_DIR [MAX_LENGTH] < input.txt */
#define _POSIX_C_SOURCE 200809L /* getline */
#include <attend/attend.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One output line, as the CLI writes it: \n, \r, other control characters (\xHH) and the
 * Unicode line breaks NEL, LS, PS (\u0085, \u2028, \u2029) escaped; the rest as it is. */
static void put_line(const char* s) {
  for (; *s != '\0'; ++s) {
    const unsigned char c = (unsigned char)s[0], c1 = (unsigned char)s[1];
    if (c == '\n') {
      fputs("\\n", stdout);
    } else if (c == '\r') {
      fputs("\\r", stdout);
    } else if ((c < 0x20 && c != '\t') || c == 0x7f) {
      printf("\\x%02X", c);
    } else if (c == 0xc2 && c1 == 0x85) {
      fputs("\\u0085", stdout), s += 1;
    } else if (c == 0xe2 && c1 == 0x80 && ((unsigned char)s[2] == 0xa8 || (unsigned char)s[2] == 0xa9)) {
      fputs((unsigned char)s[2] == 0xa8 ? "\\u2028" : "\\u2029", stdout), s += 2;
    } else {
      putchar(c);
    }
  }
  putchar('\n');
}

int main(int argc, char** argv) {
  attend_model* model = NULL;
  attend_translator* translator = NULL;
  attend_options options;
  char* line = NULL; /* grown by getline(): lines of any length */
  size_t capacity = 0;
  ssize_t n;
  if (argc < 2) return fprintf(stderr, "usage: translate_lines_c MODEL_DIR [MAX_LENGTH] < input.txt\n"), 2;
  if (attend_model_load(argv[1], NULL, &model) != ATTEND_OK ||
      attend_translator_create(model, NULL, &translator) != ATTEND_OK)
    return fprintf(stderr, "translate_lines_c: %s\n", attend_last_error()), 1;
  attend_model_free(model); /* the translator keeps what it needs */
  attend_options_init(&options); /* max_input_length: over-long lines are truncated */
  if (argc > 2) options.max_length = atoi(argv[2]);

  while ((n = getline(&line, &capacity, stdin)) != -1) {
    const char* source = line;
    attend_result* result = NULL;
    if (n > 0 && line[n - 1] == '\n') line[--n] = '\0';
    if (n > 0 && line[n - 1] == '\r') line[--n] = '\0';
    if (attend_translate_text(translator, &source, 1, &options, &result) != ATTEND_OK) {
      fprintf(stderr, "translate_lines_c: %s\n", attend_last_error());
      free(line);
      attend_translator_free(translator);
      return 1;
    }
    put_line(attend_result_text(result, 0, 0)); /* hypothesis 0 always exists */
    attend_result_free(result);
  }
  free(line);
  attend_translator_free(translator);
  return 0;
}
