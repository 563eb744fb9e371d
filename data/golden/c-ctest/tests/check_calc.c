#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int add(int a, int b);

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "";
    if (strcmp(what, "add") == 0) return add(2, 3) == 5 ? 0 : 1;
    if (strcmp(what, "wrong") == 0) {
        int got = add(2, 2);
        if (got != 5) {
            fprintf(stderr, "add(2, 2) = %d, want 5\n", got);
            return 1;
        }
        return 0;
    }
    if (strcmp(what, "crash") == 0) abort();
    if (strcmp(what, "skip") == 0) return 77;
    if (strcmp(what, "positive") == 0) return atoi(argv[2]) > 0 ? 0 : 1;
    return 2;
}
