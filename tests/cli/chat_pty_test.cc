// `reins chat` in a pseudo-terminal, as a person at a terminal uses it: the pharmacy
// agent, its model the mock upstream. Options come numbered; a typed answer that fits two
// patients is asked again; "1" chooses; the approval is a question in words, answered by
// typing "yes"; colour is on, because this is a terminal.
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <string>

#include <gtest/gtest.h>

#include "support/mock_payloads.h"
#include "support/mock_upstream.h"

namespace {

using reins::testing::MockUpstream;
using reins::testing::OpenAIResponse;

// A child process on the slave side of a pseudo-terminal; the test reads and types on
// the master side.
class Terminal {
 public:
  explicit Terminal(std::vector<std::string> argv) {
    struct winsize size = {40, 120, 0, 0};
    pid_ = forkpty(&fd_, nullptr, nullptr, &size);
    if (pid_ == 0) {
      unsetenv("NO_COLOR");
      setenv("TERM", "xterm-256color", 1);
      std::vector<char*> raw;
      for (std::string& a : argv) raw.push_back(a.data());
      raw.push_back(nullptr);
      execv(raw[0], raw.data());
      _exit(127);
    }
  }
  ~Terminal() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) close(fd_);
  }
  bool started() const { return pid_ > 0; }

  // Reads until `needle` appears after what earlier waits consumed; false after a minute
  // (a margin for a busy machine).
  bool WaitFor(const std::string& needle) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (screen_.find(needle, seen_) == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      struct pollfd p = {fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
      char buf[4096];
      const ssize_t n = read(fd_, buf, sizeof buf);
      if (n <= 0) return false;
      screen_.append(buf, static_cast<size_t>(n));
    }
    seen_ = screen_.find(needle, seen_) + needle.size();
    return true;
  }
  void Type(const std::string& line) {
    const std::string keys = line + "\r";  // Enter, as a terminal sends it
    ASSERT_EQ(write(fd_, keys.data(), keys.size()), static_cast<ssize_t>(keys.size()));
  }
  const std::string& screen() const { return screen_; }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string screen_;
  size_t seen_ = 0;
};

TEST(ChatInATerminal, TypedAnswersChooseAPatientAndApproveARefillInWords) {
  MockUpstream up;
  // Turn 1: the patient lookup asks which Maria Garcia. Turn 2 (the choice): the
  // prescriptions, then a refill of 120 units, which the rule holds (above 90).
  // Turn 3 (yes): the reply.
  up.Enqueue(MockUpstream::Json(200, OpenAIResponse({"", {{"c1", "find_patient", R"({"name":"Maria Garcia"})"}}})));
  up.Enqueue(MockUpstream::Json(200, OpenAIResponse({"", {{"c2", "list_prescriptions", R"({"patient_id":"p_4471"})"}}})));
  up.Enqueue(MockUpstream::Json(
      200, OpenAIResponse({"", {{"c3", "request_refill",
                                 R"({"patient_id":"p_4471","prescription_id":"rx_7001","drug":"metformin 500 mg","quantity":120})"}}})));
  up.Enqueue(MockUpstream::Json(200, OpenAIResponse({"The pharmacy has your refill request.", {}})));

  Terminal term({REINS_BINARY, "chat", "--config", "examples/pharmacy/agent.yaml", "--base-url", up.base_url() + "/v1",
                 "--model", "test-model"});
  ASSERT_TRUE(term.started());
  ASSERT_TRUE(term.WaitFor("user>")) << term.screen();
  term.Type("Please refill Maria Garcia's metformin");
  ASSERT_TRUE(term.WaitFor("1.\033[0m Maria Garcia (born 2 March 1962)")) << term.screen();  // the number in colour
  ASSERT_TRUE(term.WaitFor("2.\033[0m Maria Garcia (born 2 November 1991)")) << term.screen();
  ASSERT_TRUE(term.WaitFor("user>")) << term.screen();

  term.Type("maria garcia");  // fits both: asked again, nothing sent to the model
  ASSERT_TRUE(term.WaitFor("more than one")) << term.screen();
  ASSERT_TRUE(term.WaitFor("user>")) << term.screen();
  EXPECT_EQ(up.requests().size(), 1u);

  term.Type("1");
  ASSERT_TRUE(term.WaitFor("Refill metformin 500 mg for Maria Garcia (born 2 March 1962): 120 units?")) << term.screen();
  ASSERT_TRUE(term.WaitFor("answer yes or no")) << term.screen();
  ASSERT_TRUE(term.WaitFor("user>")) << term.screen();

  term.Type("yes");
  ASSERT_TRUE(term.WaitFor("The pharmacy has your refill request.")) << term.screen();
  ASSERT_TRUE(term.WaitFor("user>")) << term.screen();
  term.Type("/quit");
  EXPECT_EQ(up.requests().size(), 4u) << term.screen();
  EXPECT_EQ(term.screen().find("p_5810"), std::string::npos) << "the other patient's id is never shown";
  const std::string& screen = term.screen();
  const size_t asked = screen.find("Refill metformin");
  const std::string question = screen.substr(asked, screen.find('\n', asked) - asked);
  EXPECT_EQ(question.find_first_of("{}"), std::string::npos) << "the question is not JSON: " << question;
}

}  // namespace
