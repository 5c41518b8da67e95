// Default options of the sanitizer build (KMINI_SANITIZE), compiled into every
// kmini executable so that running one directly behaves like running it under
// the asan presets: OpenMPI and the Trilinos libraries leak at exit, which
// LeakSanitizer would report as a failure after a good run. Address and
// undefined-behaviour checks stay on; ASAN_OPTIONS in the environment still
// wins (ASAN_OPTIONS=detect_leaks=1 turns leak checks back on).
extern "C" const char* __asan_default_options() { return "detect_leaks=0"; }
