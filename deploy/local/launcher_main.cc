// pstrain_local: runs a whole cluster (1 chief, --ps ps tasks, --workers
// workers) as processes on loopback, on free ports. Every output line is
// prefixed with its task ("[worker:1] ..."). Ctrl-C, or any task failing,
// stops everything (then the exit code is non-zero and the failed task is
// named); when the chief finishes, the launcher exits 0.
//
// Flags it does not know are passed to every task, with --undefok so a task
// ignores those it does not define.
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
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cluster/cluster_spec.h"
#include "deploy/local/free_ports.h"
#include "deploy/local/local_certs.h"
#include "deploy/local/task_process.h"

namespace {

struct Options {
  int num_ps = 2;
  int num_workers = 2;
  std::string bin_dir;
  std::string host = "127.0.0.1";
  int grace_secs = 20;
  bool tls = false;
  std::vector<std::string> passthrough;
  std::vector<std::string> passthrough_names;
};

// The launcher's own flags; every other --flag goes to every task (their
// names are passed on as --undefok, so a task ignores those it lacks).
Options ParseArgs(int argc, char** argv) {
  Options o;
  o.bin_dir = std::filesystem::canonical("/proc/self/exe").parent_path().parent_path().string();
  CLI::App app(
      "Runs 1 chief, N ps tasks and N workers on loopback. Other flags (--model=mnist, "
      "--epochs=3, --train_dir=runs/x, ...) go to every task.",
      "pstrain_local");
  app.allow_extras();
  app.add_option("--ps", o.num_ps, "ps tasks")->check(CLI::Range(1, 1000))->capture_default_str();
  app.add_option("--workers", o.num_workers, "workers")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_option("--bin_dir", o.bin_dir, "the build directory holding the binaries")
      ->capture_default_str();
  app.add_option("--host", o.host, "the address every task listens on")->capture_default_str();
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
  for (const std::string& arg : app.remaining()) {
    if (arg.rfind("--", 0) != 0) {
      std::fprintf(stderr, "pstrain_local: unexpected argument '%s'\n", arg.c_str());
      std::exit(1);
    }
    const size_t eq = arg.find('=');
    std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    if (name == "tls_cert" || name == "tls_key" || name == "tls_ca" || name == "cluster_spec" ||
        name == "job" || name == "task") {
      std::fprintf(stderr, "pstrain_local: --%s is set by the launcher%s\n", name.c_str(),
                   name.rfind("tls_", 0) == 0 ? ": use --tls" : "");
      std::exit(1);
    }
    o.passthrough.push_back(arg);
    if (name.rfind("no", 0) == 0 && eq == std::string::npos) name = name.substr(2);
    o.passthrough_names.push_back(name);
  }
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

class Cluster {
 public:
  explicit Cluster(Options o) : o_(std::move(o)) {}

  int Run() {
    auto ports = pstrain::PickFreePorts(o_.host, 1 + o_.num_ps + o_.num_workers);
    if (!ports.ok()) return Fatal(ports.status().ToString());
    std::string spec = WriteSpec(*ports);
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
    std::string undefok;
    for (const auto& n : o_.passthrough_names) undefok += (undefok.empty() ? "" : ",") + n;
    auto start = [&](const std::string& job, int index) {
      std::vector<std::string> argv = {Binary(o_, job), "--cluster_spec=" + spec, "--job=" + job,
                                       "--task=" + std::to_string(index)};
      argv.insert(argv.end(), o_.passthrough.begin(), o_.passthrough.end());
      if (o_.tls) {
        for (std::string& f :
             pstrain::LocalTlsFlags(dir_.string(), job + ":" + std::to_string(index))) {
          argv.push_back(std::move(f));
        }
      }
      if (!undefok.empty()) argv.push_back("--undefok=" + undefok);
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
             std::to_string(o_.num_workers) + " workers (cluster spec " + spec + ")\n");
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
    StopAll();
    return 1;
  }

  // Relays output and watches exits until the job ends; returns the exit code.
  int Supervise() {
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    for (;;) {
      std::vector<pollfd> fds = {{sfd, POLLIN, 0}};
      for (auto& t : tasks_) {
        if (t->output_fd() >= 0) fds.push_back({t->output_fd(), POLLIN, 0});
      }
      ::poll(fds.data(), fds.size(), 200);
      Relay();
      signalfd_siginfo si;
      if (::read(sfd, &si, sizeof(si)) == sizeof(si)) {
        WriteOut("pstrain_local: " + std::string(strsignal(static_cast<int>(si.ssi_signo))) +
                 "; stopping the cluster\n");
        StopAll();
        return 130;
      }
      for (auto& t : tasks_) {
        if (!t->running() || !t->PollExit()) continue;
        Relay();
        if (t->name() == "chief:0" && t->succeeded()) {
          WriteOut("pstrain_local: chief:0 finished; waiting for the other tasks to exit\n");
          StopAll(/*wait_first=*/true);
          return 0;
        }
        if (!t->succeeded()) {
          WriteOut("pstrain_local: " + t->name() + " failed (" + t->exit_description() +
                   "); stopping the cluster\n");
          StopAll();
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

  // Stops every task still running. When `wait_first`, the tasks are
  // expected to exit on their own (the chief told them to) and get the grace
  // period before SIGTERM; otherwise SIGTERM goes out at once. The ps tasks
  // get theirs only once the chief and the workers are gone (or the grace
  // period is over), so the chief can save a checkpoint from them first.
  // SIGKILL follows for any task still up a grace period after its SIGTERM.
  void StopAll(bool wait_first = false) {
    using Clock = std::chrono::steady_clock;
    const auto grace = std::chrono::seconds(o_.grace_secs);
    const auto is_ps = [](const pstrain::TaskProcess& t) { return t.name().rfind("ps:", 0) == 0; };
    auto term_at = wait_first ? Clock::now() + grace : Clock::now();
    auto ps_term_at = term_at + grace;
    bool termed = false, ps_termed = false, killed = false;
    for (;;) {
      Relay();
      bool any = false, others = false;
      for (auto& t : tasks_) {
        const bool up = !t->PollExit();
        any |= up;
        others |= up && !is_ps(*t);
      }
      if (!any) break;
      const auto now = Clock::now();
      if (!termed && now >= term_at) {
        for (auto& t : tasks_) {
          if (!is_ps(*t)) t->Signal(SIGTERM);
        }
        termed = true;
      }
      if (termed && !ps_termed && (!others || now >= ps_term_at)) {
        for (auto& t : tasks_) {
          if (is_ps(*t)) t->Signal(SIGTERM);
        }
        ps_termed = true;
        ps_term_at = now;
      }
      if (ps_termed && !killed && now >= ps_term_at + grace) {
        for (auto& t : tasks_) {
          if (!t->running()) continue;
          WriteOut("pstrain_local: " + t->name() + " did not stop; killing it\n");
          t->Signal(SIGKILL);
        }
        killed = true;
      }
      ::usleep(50 * 1000);
    }
    Relay();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  const Options o_;
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
  Options o = ParseArgs(argc, argv);
  return Cluster(std::move(o)).Run();
}
