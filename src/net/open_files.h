// RaiseOpenFileLimit: a server holds a descriptor per connection, and so does a program
// that opens thousands of them to load one (bench/); the soft limit (often 1024) would
// cap either far below what the machine allows, so it is raised to the hard limit.
#pragma once

namespace reins {

void RaiseOpenFileLimit();

}  // namespace reins
