// Test file "sdprl-loss-test-nodesc.so": a shared module named like a plugin that exports no
// descriptor; the host must refuse it with a clear message and discovery must skip it.
extern "C" __attribute__((visibility("default"))) int sdprl_test_not_a_plugin() { return 42; }
