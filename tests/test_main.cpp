//===- test_main.cpp - doctest entry point shared by every test suite -----===//
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
