// A stand-in for the libsdprl of another SONAME (libsdprl.so.999, set by CMakeLists.txt), which the
// test plugin "test-other-soname" is linked against.
__attribute__((visibility("default"))) double sdprl_test_other_soname_scale() { return 1.0; }
