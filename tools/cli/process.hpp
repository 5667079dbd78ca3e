#pragma once
// Running a child process with a time limit, its stdout and stderr captured together: the host
// compiler, and the GPU work of `cake run` / `cake bench` (a crash, a trap or a hang there ends the
// child, never the tool). The child leads its own process group, so a time-out kills whatever it started.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "util.hpp"

namespace cake_cli {

struct process_result {
  bool started = false;
  std::string start_error;  // why it did not start (exec failed: no such program, ...)
  int exit_code = -1;       // when it exited
  int signal = 0;           // when a signal ended it
  bool timed_out = false;   // killed at the time limit
  std::string output;       // stdout and stderr, interleaved as written
  double wall_ms = 0;
  bool ok() const { return started && !timed_out && signal == 0 && exit_code == 0; }
};

inline std::string signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV (segmentation fault)";
    case SIGABRT: return "SIGABRT (abort)";
    case SIGBUS: return "SIGBUS (bus error)";
    case SIGFPE: return "SIGFPE (arithmetic exception)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGKILL: return "SIGKILL (killed)";
    case SIGTERM: return "SIGTERM (terminated)";
    default: return "signal " + std::to_string(sig);
  }
}

// Runs argv[0] (searched in PATH) with the given arguments. `timeout_s` <= 0: no limit. `max_output`
// bytes of output are kept (the rest is counted and dropped).
inline process_result run_process(const std::vector<std::string>& argv, double timeout_s, std::size_t max_output = 4u << 20) {
  process_result r;
  stopwatch clock;
  int out[2], err_pipe[2];
  if (pipe(out) != 0 || pipe(err_pipe) != 0) {
    r.start_error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  fcntl(err_pipe[1], F_SETFD, FD_CLOEXEC);
  const pid_t pid = fork();
  if (pid < 0) {
    r.start_error = std::string("fork: ") + std::strerror(errno);
    return r;
  }
  if (pid == 0) {
    setpgid(0, 0);
    dup2(out[1], 1);
    dup2(out[1], 2);
    close(out[0]);
    close(out[1]);
    close(err_pipe[0]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    const int e = errno;  // tell the parent why exec failed
    (void)!write(err_pipe[1], &e, sizeof e);
    _exit(127);
  }
  setpgid(pid, pid);
  close(out[1]);
  close(err_pipe[1]);
  int exec_errno = 0;
  const bool exec_failed = read(err_pipe[0], &exec_errno, sizeof exec_errno) == static_cast<ssize_t>(sizeof exec_errno);
  close(err_pipe[0]);
  if (exec_failed) {
    waitpid(pid, nullptr, 0);
    close(out[0]);
    r.start_error = "cannot run '" + argv[0] + "': " + std::strerror(exec_errno);
    return r;
  }
  r.started = true;
  std::size_t dropped = 0;
  char buf[65536];
  bool open = true;
  while (open) {
    int wait_ms = -1;
    if (timeout_s > 0) {
      const double left = timeout_s * 1e3 - clock.ms();
      if (left <= 0) {
        r.timed_out = true;
        kill(-pid, SIGKILL);
        break;
      }
      wait_ms = static_cast<int>(left) + 1;
    }
    pollfd p{out[0], POLLIN, 0};
    const int n = poll(&p, 1, wait_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) continue;  // re-check the deadline
    const ssize_t got = read(out[0], buf, sizeof buf);
    if (got <= 0) {
      open = false;
      break;
    }
    const std::size_t room = r.output.size() < max_output ? max_output - r.output.size() : 0;
    r.output.append(buf, std::min<std::size_t>(room, static_cast<std::size_t>(got)));
    dropped += static_cast<std::size_t>(got) - std::min<std::size_t>(room, static_cast<std::size_t>(got));
  }
  close(out[0]);
  int status = 0;
  if (!r.timed_out && timeout_s > 0) {
    // Output closed: the child is exiting (or closed its output and runs on); wait for it with the time limit.
    while (true) {
      const pid_t w = waitpid(pid, &status, WNOHANG);
      if (w == pid) break;
      if (clock.ms() > timeout_s * 1e3) {
        r.timed_out = true;
        kill(-pid, SIGKILL);
        waitpid(pid, &status, 0);
        break;
      }
      usleep(2000);
    }
  } else {
    waitpid(pid, &status, 0);
  }
  if (!r.timed_out) {
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  }
  if (dropped) r.output += "\n[" + std::to_string(dropped) + " more bytes of output dropped]\n";
  r.wall_ms = clock.ms();
  return r;
}

}  // namespace cake_cli
