/* Helpers of the example property plugins: the words of a message or a
 * reply, without copying (cmc's bytes are not NUL-terminated). */
#ifndef CMC_DEMO_WORDS_H
#define CMC_DEMO_WORDS_H

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmc/property.h>

/* Word number index (from 0) of bytes, split at spaces and line ends,
 * copied into word (at most size bytes, NUL included); 0 if there is no
 * such word. */
static inline int word_at(struct cmc_bytes bytes, int index, char *word,
                          size_t size) {
  size_t at = 0;
  for (int n = 0;; ++n) {
    while (at < bytes.size && isspace(bytes.data[at]))
      ++at;
    if (at == bytes.size)
      return 0;
    size_t end = at;
    while (end < bytes.size && !isspace(bytes.data[end]))
      ++end;
    if (n == index) {
      size_t length = end - at < size - 1 ? end - at : size - 1;
      memcpy(word, bytes.data + at, length);
      word[length] = '\0';
      return 1;
    }
    at = end;
  }
}

/* Whether word number index of bytes is text, ignoring case. */
static inline int word_is(struct cmc_bytes bytes, int index, const char *text) {
  char word[64];
  return word_at(bytes, index, word, sizeof word) &&
         strcasecmp(word, text) == 0;
}

/* Whether bytes begin with text. */
static inline int starts_with(struct cmc_bytes bytes, const char *text) {
  size_t length = strlen(text);
  return bytes.size >= length && memcmp(bytes.data, text, length) == 0;
}

/* Word number index of bytes as a number; -1 if it is not one. */
static inline long number_at(struct cmc_bytes bytes, int index) {
  char word[32];
  char *end = NULL;
  if (!word_at(bytes, index, word, sizeof word))
    return -1;
  long value = strtol(word, &end, 10);
  return *end == '\0' && end != word ? value : -1;
}

#endif
