// Symbol visibility for the framework library. Everything is hidden by default
// (CMAKE_CXX_VISIBILITY_PRESET hidden); public classes and functions are marked SDPRL_API so that
// their vtables and typeinfo are shared between the framework, the program and the plugins.
#pragma once

#define SDPRL_API __attribute__((visibility("default")))
