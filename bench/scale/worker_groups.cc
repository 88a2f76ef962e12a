#include "bench/scale/worker_groups.h"

#include <poll.h>
#include <signal.h>
#include <sys/types.h>

#include <cstdio>
#include <sstream>
#include <utility>

#include "bench/scale/simulated_worker.h"
#include "cluster/placement_flags.h"
#include "nn/model.h"
#include "nn/model_spec.h"
#include "ps/client/ps_fleet.h"

namespace pstrain {
namespace bench {

namespace {

// What a group's report lines start with; everything else it prints (its
// log) is not a report.
constexpr char kReport[] = "scale_group ";

void Report(const std::string& line) {
  std::printf("%s%s\n", kReport, line.c_str());
  std::fflush(stdout);
}

}  // namespace

int RunWorkerGroup(const GroupSpec& spec) {
  // Blocked in every thread from here on, and taken one at a time below.
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGUSR1, SIGUSR2, SIGTERM}) sigaddset(&signals, s);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto model_spec = nn::LoadModelSpec(spec.model_spec);
  if (!model_spec.ok()) {
    std::fprintf(stderr, "%s\n", model_spec.status().ToString().c_str());
    return 1;
  }
  auto model = nn::CreateModel(*model_spec);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
    return 1;
  }
  auto placement = cluster::PlacementOptionsFromFlags();
  if (!placement.ok()) {
    std::fprintf(stderr, "%s\n", placement.status().ToString().c_str());
    return 1;
  }
  auto layout = PsFleet::LayoutOf(static_cast<int>(spec.ps_ports.size()), (*model)->variables(),
                                  /*slots_per_variable=*/0, *placement);
  if (!layout.ok()) {
    std::fprintf(stderr, "%s\n", layout.status().ToString().c_str());
    return 1;
  }
  for (const nn::EmbeddingLookup& lookup : (*model)->lookups()) {
    layout->tables.push_back(lookup.table);  // spread over every ps by key
  }
  WorkerTally tally;
  std::vector<std::unique_ptr<SimulatedWorker>> workers;
  std::vector<std::thread> threads;
  for (int i = spec.first; i < spec.first + spec.count; ++i) {
    SimulatedWorker::Options options;
    options.index = i;
    options.sync = spec.sync;
    options.compute = spec.compute;
    options.ids_per_step = spec.ids_per_step;
    options.zipf_s = spec.zipf_s;
    workers.push_back(std::make_unique<SimulatedWorker>(options, spec.ps_ports, *layout, &tally));
    threads.emplace_back([&worker = *workers.back()] { worker.Run(); });
  }
  int reported = -1, reported_pulled = -1;
  int64_t pushes_at_start = 0, rows_at_start = 0;
  for (;;) {
    const struct timespec tick = {0, 100 * 1000 * 1000};
    const int signo = sigtimedwait(&signals, nullptr, &tick);
    if (tally.pulled.load() != reported_pulled) {
      reported_pulled = tally.pulled.load();
      Report("pulled " + std::to_string(reported_pulled));
    }
    if (tally.stepped.load() != reported) {
      reported = tally.stepped.load();
      Report("stepped " + std::to_string(reported));
    }
    if (signo == SIGUSR1) {
      pushes_at_start = tally.pushes.load();
      rows_at_start = tally.rows.load();
      (void)tally.TakeCycles();
      tally.measuring.store(true);
    } else if (signo == SIGUSR2) {
      tally.measuring.store(false);
      std::ostringstream line;
      line << "window " << tally.pushes.load() - pushes_at_start << " "
           << tally.rows.load() - rows_at_start;
      for (double ms : tally.TakeCycles()) line << " " << ms;
      Report(line.str());
    } else if (signo == SIGTERM) {
      break;
    }
  }
  tally.stop.store(true);
  for (auto& t : threads) t.join();
  const auto examples = tally.examples();
  for (const auto& [code, n] : tally.errors()) {
    Report("error " + code + " " + std::to_string(n) + " " + examples.at(code));
  }
  Report("end");
  return 0;
}

StatusOr<std::unique_ptr<WorkerGroups>> WorkerGroups::Start(
    const std::string& self, int groups, const GroupSpec& all, bool show_output,
    const std::function<std::vector<std::string>(const GroupSpec&)>& args) {
  std::unique_ptr<WorkerGroups> g(new WorkerGroups);
  g->show_output_ = show_output;
  g->pulled_.assign(groups, 0);
  g->stepped_.assign(groups, 0);
  g->windowed_.assign(groups, false);
  g->ended_.assign(groups, false);
  g->killed_.assign(groups, false);
  for (int i = 0; i < groups; ++i) {
    GroupSpec one = all;
    one.first = all.first + all.count * i / groups;
    one.count = all.first + all.count * (i + 1) / groups - one.first;
    std::vector<std::string> argv = {self};
    for (std::string& a : args(one)) argv.push_back(std::move(a));
    PS_ASSIGN_OR_RETURN(auto p, TaskProcess::Spawn("workers:" + std::to_string(i), argv));
    g->procs_.push_back(std::move(p));
  }
  WorkerGroups* raw = g.get();
  g->drainer_ = std::thread([raw] { raw->Drain(); });
  return g;
}

WorkerGroups::~WorkerGroups() {
  SignalAll(SIGKILL);
  done_.store(true);
  if (drainer_.joinable()) drainer_.join();
}

void WorkerGroups::Drain() {
  for (;;) {
    std::vector<pollfd> fds;
    for (auto& p : procs_) {
      if (p->output_fd() >= 0) fds.push_back({p->output_fd(), POLLIN, 0});
    }
    if (!fds.empty()) ::poll(fds.data(), fds.size(), 50);
    bool exited = true;
    for (size_t i = 0; i < procs_.size(); ++i) {
      std::string got;
      const bool open = procs_[i]->DrainOutput(&got);
      // Whole lines, each "[workers:i] ...".
      std::istringstream lines(got);
      std::string line;
      while (std::getline(lines, line)) Take(static_cast<int>(i), line);
      // Exited and read to the end.
      exited &= procs_[i]->PollExit() && !open;
    }
    if (exited) {
      exited_.store(true);
      return;
    }
    if (done_.load()) return;
    if (fds.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void WorkerGroups::Take(int group, const std::string& line) {
  const size_t at = line.find(kReport);
  if (at == std::string::npos) {
    if (show_output_) std::fprintf(stderr, "%s\n", line.c_str());
    return;
  }
  std::istringstream report(line.substr(at + sizeof(kReport) - 1));
  std::string kind;
  report >> kind;
  std::lock_guard<std::mutex> lock(mu_);
  if (kind == "pulled") {
    report >> pulled_[group];
  } else if (kind == "stepped") {
    report >> stepped_[group];
  } else if (kind == "window") {
    int64_t pushes = 0, rows = 0;
    report >> pushes >> rows;
    window_.pushes += pushes;
    window_.rows += rows;
    for (double ms; report >> ms;) window_.cycles_ms.push_back(ms);
    windowed_[group] = true;
  } else if (kind == "error") {
    std::string code;
    int64_t n = 0;
    report >> code >> n;
    std::string message;
    std::getline(report >> std::ws, message);
    errors_[code] += n;
    examples_.emplace(code, message);
  } else if (kind == "end") {
    ended_[group] = true;
  }
}

void WorkerGroups::SignalAll(int signo) {
  // By pid: the drainer reaps them (a reaped group is not signalled again
  // but at destruction).
  if (exited_.load()) return;
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < procs_.size(); ++i) {
    if (!killed_[i]) ::kill(procs_[i]->pid(), signo);
  }
}

void WorkerGroups::Kill(int g) {
  std::lock_guard<std::mutex> lock(mu_);
  killed_[g] = true;
  windowed_[g] = true;  // nothing more comes from it
  ::kill(procs_[g]->pid(), SIGKILL);
}

int WorkerGroups::Live(const std::vector<int>& per_group) const {
  std::lock_guard<std::mutex> lock(mu_);
  int sum = 0;
  for (size_t i = 0; i < per_group.size(); ++i) {
    if (!killed_[i]) sum += per_group[i];
  }
  return sum;
}

int WorkerGroups::pulled() const { return Live(pulled_); }
int WorkerGroups::stepped() const { return Live(stepped_); }

void WorkerGroups::StartWindow() { SignalAll(SIGUSR1); }

Status WorkerGroups::EndWindow(std::chrono::seconds timeout, Window* out) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    windowed_ = killed_;  // a killed group reports nothing
    window_ = Window();
  }
  SignalAll(SIGUSR2);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      bool all = true;
      for (bool w : windowed_) all &= w;
      if (all) {
        *out = std::move(window_);
        return OkStatus();
      }
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return DeadlineExceeded("a worker group did not report its window");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Status WorkerGroups::Stop(std::chrono::seconds timeout, std::map<std::string, int64_t>* errors,
                          std::map<std::string, std::string>* examples) {
  SignalAll(SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!exited_.load()) {
    if (std::chrono::steady_clock::now() > deadline) {
      return DeadlineExceeded("the worker groups did not exit");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (drainer_.joinable()) drainer_.join();
  std::lock_guard<std::mutex> lock(mu_);
  *errors = errors_;
  *examples = examples_;
  for (size_t i = 0; i < procs_.size(); ++i) {
    if (killed_[i]) continue;
    if (!ended_[i] || !procs_[i]->succeeded()) {
      return Internal(procs_[i]->name() + " did not end well: " + procs_[i]->exit_description());
    }
  }
  return OkStatus();
}

}  // namespace bench
}  // namespace pstrain
