// Task<T>: the awaitable every suspending call in reins returns (model calls, tool
// calls, whole turns). It is Boost.Asio's C++20 awaitable, so real HTTP providers, MCP
// servers and the Beast server plug in without reshaping the pipeline. A Task runs on
// the executor it is co_spawn'ed on; it holds no thread while it waits.
#pragma once

#include <boost/asio/awaitable.hpp>

namespace reins {
template <typename T>
using Task = boost::asio::awaitable<T>;
}  // namespace reins
