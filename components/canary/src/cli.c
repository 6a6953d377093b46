#include <stdio.h>

#include "canary.h"

int main(void) {
    char line[512];
    canary_result r = canary_run();
    canary_format_json(&r, line, sizeof line);
    puts(line);
    return 0;
}
