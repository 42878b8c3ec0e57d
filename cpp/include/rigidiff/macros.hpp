// Argument checks that cross into Python as exceptions (invalid_argument -> ValueError,
// out_of_range -> IndexError, runtime_error -> RuntimeError).
#pragma once

#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <string>

#define RD_THROW(ExceptionType, message) \
  do {                                   \
    std::ostringstream rd_oss_;          \
    rd_oss_ << std::setprecision(12);    \
    rd_oss_ << message;                  \
    throw ExceptionType(rd_oss_.str());  \
  } while (0)

#define RD_CHECK_ARG(cond, message)                        \
  do {                                                     \
    if (!(cond)) RD_THROW(std::invalid_argument, message); \
  } while (0)

#define RD_CHECK_SIZE(name, actual, expected) \
  RD_CHECK_ARG((actual) == (expected), name << " must have size " << (expected) << ", got " << (actual))
