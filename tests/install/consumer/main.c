/* Links the installed libtad through tad.h only, as a downstream C project would. */
#include <stdio.h>
#include <string.h>

#include <tad.h>

int main(void) {
    tad_session_options opts;
    tad_session *s = NULL;
    if (strcmp(tad_version(), "0.2.0") != 0) {
        fprintf(stderr, "unexpected version %s\n", tad_version());
        return 1;
    }
    if (tad_session_new(NULL, NULL) != TAD_ERR_INVALID_ARGUMENT) return 1;
    /* The function a binding without macros uses: it fills the fields of the header's version. */
    if (tad_session_options_init(&opts, TAD_SESSION_OPTIONS_VERSION) != TAD_OK) {
        fprintf(stderr, "%s\n", tad_error_last());
        return 1;
    }
    opts.work_dir = "consumer-session";
    if (tad_session_new(&opts, &s) != TAD_OK) {
        fprintf(stderr, "%s\n", tad_error_last());
        return 1;
    }
    tad_session_free(s);
    printf("consumer ok: tad %s\n", tad_version());
    return 0;
}
