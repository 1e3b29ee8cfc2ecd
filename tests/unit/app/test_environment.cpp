// Every test process gets a compile cache of its own making: XDG_CACHE_HOME points into the
// build tree before any test runs, so the kernlab runs the tests start (and every runner given
// the default cache) never read or write the user's ~/.cache/kernlab. It is set here, in the
// test binaries, rather than by CTest, so running a test binary by hand is just as isolated.
#include <cstdlib>

namespace {

const bool isolated_cache = [] {
  setenv("XDG_CACHE_HOME", KERNLAB_TEST_CACHE_HOME, 1);
  return true;
}();

}  // namespace
