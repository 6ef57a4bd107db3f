// What the end-to-end tests of `reins serve` do as a client: one HTTP call with reins'
// own client (the reply's status, JSON body and raw response), and a new API key made
// with the real binary. Shared by serve_e2e_test and serve_abuse_test.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "net/http_client.h"
#include "reins/json.h"
#include "support/run_sync.h"

namespace reins::testing {

struct Reply {
  int status = 0;  // 0: the request never got an answer (the body says why)
  Json body;
  HttpResponse raw;
};

inline Reply Call(const std::string& method, const std::string& url, const std::string& body = "",
                  std::vector<HttpHeaderField> headers = {}) {
  HttpClient client;
  HttpRequest r;
  r.method = method;
  r.url = url;
  r.body = body;
  r.headers = std::move(headers);
  auto out = RunSync(client.Send(r));
  Reply reply;
  if (!out.ok()) {
    reply.body = Json{{"transport_error", out.status().message()}};
    return reply;
  }
  reply.status = out->status;
  reply.raw = *out;
  reply.body = Json::parse(out->body, nullptr, false);
  return reply;
}

// `reins keys add TENANT --keys FILE`: the new key it prints ("" when it failed).
// `extra`: more arguments for `reins keys add` (--speaker NAME, --role NAME).
inline std::string AddKeyWithBinary(const std::string& keys_file, const std::string& tenant,
                                    const std::string& extra = "") {
  std::string cmd = std::string(REINS_BINARY) + " keys add " + tenant + " --keys " + keys_file + " " + extra + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  char buf[256] = {0};
  std::string key = p != nullptr && fgets(buf, sizeof buf, p) != nullptr ? buf : "";
  if (p != nullptr) pclose(p);
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r')) key.pop_back();
  return key;
}

}  // namespace reins::testing
