// pstrain_local: runs a whole cluster (1 chief, --ps ps tasks, --workers
// workers) as processes on one host, on ports it holds for them. Every output
// line is prefixed with its task ("[worker:1] ..."). When the chief
// finishes, the launcher exits 0; when a task fails, it stops the rest and
// exits 1 naming it; on SIGINT (a terminal's Ctrl-C) or SIGTERM it stops the
// workers, then the chief (which saves a checkpoint while the ps tasks still
// serve), then the ps tasks, and exits 128 + the signal; a second signal
// kills every task at once.
//
// Every other flag goes to the tasks whose binaries define it (each binary
// is asked for its flags); a flag none defines is refused, naming the
// nearest real one.
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cluster/cluster_spec.h"
#include "deploy/local/free_ports.h"
#include "deploy/local/local_certs.h"
#include "deploy/local/task_flags.h"
#include "deploy/local/task_process.h"

namespace {

struct Options {
  int num_ps = 2;
  int num_workers = 2;
  std::string bin_dir;
  std::string host = "127.0.0.1";
  int grace_secs = 20;
  bool tls = false;
  std::vector<std::string> task_args;  // what the launcher does not take itself
};

// The launcher's own flags, for the nearest-name suggestion.
const std::vector<std::string> kLauncherFlags = {"ps",         "workers", "bin_dir", "host",
                                                 "grace_secs", "tls",     "help"};

// The launcher's own flags; the rest are the tasks' (RouteTaskArgs).
Options ParseArgs(int argc, char** argv) {
  Options o;
  o.bin_dir = std::filesystem::canonical("/proc/self/exe").parent_path().parent_path().string();
  CLI::App app(
      "Runs 1 chief, N ps tasks and N workers on one host. Other flags (--model=mnist, "
      "--epochs=3, --train_dir=runs/x, ...) go to the tasks that take them; one no task "
      "takes is refused. Ctrl-C stops the job gracefully (the chief saves a checkpoint "
      "first) and exits 130; a second Ctrl-C stops it at once.",
      "pstrain_local");
  app.allow_extras();
  app.add_option("--ps", o.num_ps, "ps tasks")->check(CLI::Range(1, 1000))->capture_default_str();
  app.add_option("--workers", o.num_workers, "workers")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_option("--bin_dir", o.bin_dir, "the build directory holding the binaries")
      ->capture_default_str();
  app.add_option("--host", o.host,
                 "the IPv4 address every task listens on (the ps tasks' ports, the chief's "
                 "HTTP port)")
      ->capture_default_str();
  app.add_option("--grace_secs", o.grace_secs,
                 "seconds a task gets to stop after SIGTERM before SIGKILL")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_flag("--tls,!--notls", o.tls,
               "mutual TLS on every channel, with a CA and a certificate per task made for the "
               "run (the chief's HTTP endpoint then serves HTTPS)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help: 0; a bad flag or value: 1, after CLI11's message naming it.
    std::exit(app.exit(e) == 0 ? 0 : 1);
  }
  o.task_args = app.remaining();
  return o;
}

std::string Binary(const Options& o, const std::string& job) {
  // The build puts each binary in its folder's build dir.
  if (job == "ps") return o.bin_dir + "/ps/ps_server";
  return o.bin_dir + "/" + job + "/" + job;
}

void WriteOut(const std::string& s) {
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fflush(stdout);
}

// The tasks' flags, asked of their binaries, and the launcher's arguments
// routed to the jobs that take them; exits 1 naming a flag no task takes.
std::map<std::string, std::vector<std::string>> RouteTaskArgs(const Options& o) {
  std::map<std::string, pstrain::FlagSet> jobs;
  for (const char* job : {"ps", "chief", "worker"}) {
    auto flags = pstrain::ReadBinaryFlags(Binary(o, job));
    if (!flags.ok()) {
      std::fprintf(stderr, "pstrain_local: %s\n", flags.status().ToString().c_str());
      std::exit(1);
    }
    jobs[job] = std::move(flags).value();
  }
  auto route = pstrain::RouteFlags(o.task_args, jobs, kLauncherFlags,
                                   {{"cluster_spec", ""},
                                    {"job", ""},
                                    {"task", ""},
                                    {"tls_cert", "--tls"},
                                    {"tls_key", "--tls"},
                                    {"tls_ca", "--tls"},
                                    {"listen_host", "--host"},
                                    {"http_host", "--host"}});
  if (!route.ok()) {
    std::fprintf(stderr, "pstrain_local: %s\n", route.status().message().c_str());
    std::exit(1);
  }
  return std::move(route->by_job);
}

class Cluster {
 public:
  Cluster(Options o, std::map<std::string, std::vector<std::string>> args, int signal_fd)
      : o_(std::move(o)), args_(std::move(args)), signal_fd_(signal_fd) {}

  int Run() {
    auto ports = pstrain::ReservedPorts::Reserve(o_.host, 1 + o_.num_ps + o_.num_workers);
    if (!ports.ok()) return Fatal(ports.status().ToString());
    ports_ = std::move(ports).value();
    std::string spec = WriteSpec(ports_.ports());
    if (spec.empty()) return 1;
    if (o_.tls) {
      std::vector<std::string> names = {"chief:0"};
      for (int i = 0; i < o_.num_ps; ++i) names.push_back("ps:" + std::to_string(i));
      for (int i = 0; i < o_.num_workers; ++i) names.push_back("worker:" + std::to_string(i));
      const pstrain::Status certs = pstrain::WriteLocalCerts(dir_.string(), o_.host, names);
      if (!certs.ok()) return Fatal(certs.ToString());
      WriteOut("pstrain_local: mutual TLS on every channel, certificates in " + dir_.string() +
               "\n");
    }
    // Each task listens on --host alone, as the spec names it.
    args_["ps"].push_back("--listen_host=" + o_.host);
    args_["chief"].push_back("--http_host=" + o_.host);
    auto start = [&](const std::string& job, int index) {
      std::vector<std::string> argv = {Binary(o_, job), "--cluster_spec=" + spec, "--job=" + job,
                                       "--task=" + std::to_string(index)};
      argv.insert(argv.end(), args_[job].begin(), args_[job].end());
      if (o_.tls) {
        for (std::string& f :
             pstrain::LocalTlsFlags(dir_.string(), job + ":" + std::to_string(index))) {
          argv.push_back(std::move(f));
        }
      }
      // Each task sizes its compute threads from the spec (workers sharing
      // this host split its CPUs), as it would started from TF_CONFIG.
      auto p = pstrain::TaskProcess::Spawn(job + ":" + std::to_string(index), argv, {});
      if (!p.ok()) return false;
      tasks_.push_back(std::move(p).value());
      return true;
    };
    for (int i = 0; i < o_.num_ps; ++i) {
      if (!start("ps", i)) return Fatal("cannot start ps:" + std::to_string(i));
    }
    if (!start("chief", 0)) return Fatal("cannot start chief:0");
    for (int i = 0; i < o_.num_workers; ++i) {
      if (!start("worker", i)) return Fatal("cannot start worker:" + std::to_string(i));
    }
    WriteOut("pstrain_local: started 1 chief, " + std::to_string(o_.num_ps) + " ps, " +
             std::to_string(o_.num_workers) + (o_.num_workers == 1 ? " worker" : " workers") +
             " (cluster spec " + spec + ")\n");
    return Supervise();
  }

 private:
  std::string WriteSpec(const std::vector<int>& ports) {
    dir_ = std::filesystem::temp_directory_path() / ("pstrain-local-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    pstrain::cluster::ClusterSpec spec;
    auto list = [&](int begin, int n) {
      std::vector<std::string> addresses;
      for (int i = 0; i < n; ++i)
        addresses.push_back(o_.host + ":" + std::to_string(ports[begin + i]));
      return addresses;
    };
    spec.jobs["chief"] = list(0, 1);
    spec.jobs["ps"] = list(1, o_.num_ps);
    spec.jobs["worker"] = list(1 + o_.num_ps, o_.num_workers);
    std::string path = (dir_ / "cluster.json").string();
    const pstrain::Status written = pstrain::cluster::WriteClusterSpec(spec, path);
    if (!written.ok()) {
      Fatal(written.ToString());
      return "";
    }
    return path;
  }

  int Fatal(const std::string& msg) {
    std::fprintf(stderr, "pstrain_local: %s\n", msg.c_str());
    StopAll(Ending::kFailure);
    return 1;
  }

  // The stop signal waiting on signal_fd_, or 0.
  int TakeSignal() {
    signalfd_siginfo si;
    if (::read(signal_fd_, &si, sizeof(si)) != sizeof(si)) return 0;
    return static_cast<int>(si.ssi_signo);
  }

  // Relays output and watches exits until the job ends; returns the exit code.
  int Supervise() {
    for (;;) {
      std::vector<pollfd> fds = {{signal_fd_, POLLIN, 0}};
      for (auto& t : tasks_) {
        if (t->output_fd() >= 0) fds.push_back({t->output_fd(), POLLIN, 0});
      }
      ::poll(fds.data(), fds.size(), 200);
      Relay();
      if (const int signo = TakeSignal(); signo != 0) {
        WriteOut("pstrain_local: " + std::string(strsignal(signo)) +
                 "; stopping the cluster: the workers, then the chief (it saves a checkpoint), "
                 "then the ps tasks (" +
                 (signo == SIGINT ? "Ctrl-C" : "the signal") +
                 " again stops every task at once)\n");
        StopAll(Ending::kSignal);
        return kStoppedBySignal + signo;
      }
      for (auto& t : tasks_) {
        if (!t->running() || !t->PollExit()) continue;
        Relay();
        if (t->name() == "chief:0" && t->succeeded()) {
          WriteOut("pstrain_local: chief:0 finished; waiting for the other tasks to exit\n");
          StopAll(Ending::kChiefDone);
          return 0;
        }
        if (!t->succeeded()) {
          WriteOut("pstrain_local: " + t->name() + " failed (" + t->exit_description() +
                   "); stopping the cluster\n");
          StopAll(Ending::kFailure);
          return 1;
        }
      }
    }
  }

  void Relay() {
    std::string out;
    for (auto& t : tasks_) t->DrainOutput(&out);
    if (!out.empty()) WriteOut(out);
  }

  enum class Ending { kChiefDone, kFailure, kSignal };
  static constexpr int kStoppedBySignal = 128;

  // Stops every task still running, in order: the workers, then the chief,
  // then the ps tasks, each group stopped once the one before has exited, so
  // the chief saves its checkpoint from ps tasks that still serve. A group
  // gets SIGTERM, then SIGKILL a grace period later. After the chief finished
  // (kChiefDone) the tasks are expected to exit on their own and get the
  // grace period first. A stop signal meanwhile kills every task at once.
  void StopAll(Ending ending) {
    using Clock = std::chrono::steady_clock;
    const auto grace = std::chrono::seconds(o_.grace_secs);
    auto group = [](const pstrain::TaskProcess& t) {
      if (t.name().rfind("worker:", 0) == 0) return 0;
      return t.name().rfind("chief:", 0) == 0 ? 1 : 2;
    };
    // Until then every group may exit on its own.
    const auto own_exit_until = ending == Ending::kChiefDone ? Clock::now() + grace : Clock::now();
    int stopping = 0;  // the group being stopped; 3 once all are gone
    bool termed = false;
    auto act_at = own_exit_until;  // when the group gets SIGTERM, or SIGKILL once termed
    bool killed_all = false;
    for (;;) {
      Relay();
      if (const int signo = TakeSignal(); signo != 0 && !killed_all) {
        WriteOut("pstrain_local: " + std::string(strsignal(signo)) +
                 " while stopping; killing every task now\n");
        for (auto& t : tasks_) t->Signal(SIGKILL);
        killed_all = true;
      }
      bool up[3] = {false, false, false};
      for (auto& t : tasks_) {
        if (!t->PollExit()) up[group(*t)] = true;
      }
      while (stopping < 3 && !up[stopping]) {
        ++stopping;
        termed = false;
        act_at = std::max(Clock::now(), own_exit_until);
      }
      if (stopping == 3) break;
      const auto now = Clock::now();
      if (now >= act_at) {
        for (auto& t : tasks_) {
          if (group(*t) != stopping || !t->running()) continue;
          if (termed) WriteOut("pstrain_local: " + t->name() + " did not stop; killing it\n");
          t->Signal(termed ? SIGKILL : SIGTERM);
        }
        termed = true;
        act_at = now + grace;
      }
      ::usleep(50 * 1000);
    }
    Relay();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  const Options o_;
  std::map<std::string, std::vector<std::string>> args_;  // by job
  const int signal_fd_;
  pstrain::ReservedPorts ports_;  // held for the tasks while they run
  std::filesystem::path dir_;
  std::vector<std::unique_ptr<pstrain::TaskProcess>> tasks_;
};

}  // namespace

int main(int argc, char** argv) {
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  const int signal_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  Options o = ParseArgs(argc, argv);
  auto args = RouteTaskArgs(o);
  return Cluster(std::move(o), std::move(args), signal_fd).Run();
}
