#include "ps/client/ps_fleet_streams.h"

#include <algorithm>
#include <utility>

#include "ps/client/shard_rows.h"

namespace pstrain {
StreamedPull::StreamedPull(PsFleet* fleet, std::vector<Tensor>* values, int64_t min_step,
                           std::chrono::milliseconds wait)
    : fleet_(fleet), values_(values), min_step_(min_step), wait_(wait) {
  const auto& variables = fleet_->variables_;
  values_->resize(variables.size());
  shards_missing_.resize(variables.size());
  for (size_t v = 0; v < variables.size(); ++v) {
    fleet_->ShapeVariable(v, values_);
    shards_missing_[v] =
        static_cast<int>(fleet_->placement_.ShardsOfVariable(variables[v].name).size());
  }
  {
    MutexLock lock(&fleet_->pull_buffers_mu_);
    buffers_.swap(fleet_->pull_buffers_);  // a concurrent pull finds none and allocates
  }
  buffers_.resize(fleet_->num_ps());
  steps_.assign(fleet_->num_ps(), 0);
  for (int ps = 0; ps < fleet_->num_ps(); ++ps)
    threads_.emplace_back(&StreamedPull::PullFromPs, this, ps);
}

StreamedPull::~StreamedPull() { Finish(); }

void StreamedPull::PullFromPs(int ps) {
  PsConnection* client = fleet_->clients_[ps].get();
  const cluster::Placement& placement = fleet_->placement_;
  const auto& variables = fleet_->variables_;
  bool answered = false;
  auto answer = [&](int64_t step) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (answered) return;
    steps_[ps] = step;
    ++steps_known_;
    answered = true;
  };
  for (size_t v = 0; v < variables.size(); ++v) {
    std::vector<const cluster::Shard*> mine;
    std::vector<std::string> names;
    for (const cluster::Shard* shard : placement.ShardsOfVariable(variables[v].name)) {
      if (shard->ps != ps) continue;
      mine.push_back(shard);
      names.push_back(shard->name);
    }
    if (mine.empty()) continue;
    // A part of a variable is received straight into its rows.
    for (const cluster::Shard* shard : mine) {
      if (shard->num_parts > 1) buffers_[ps][shard->name] = RowsToFill(&(*values_)[v], *shard);
    }
    int64_t step = 0;
    Status pulled =
        client->Pull(placement.fingerprint, names, &buffers_[ps], &step, min_step_, wait_);
    for (const cluster::Shard* shard : mine) {
      if (!pulled.ok()) break;
      pulled = fleet_->PlaceShard(*shard, &buffers_[ps], &(*values_)[v]);
    }
    DropViews(&buffers_[ps]);
    if (!pulled.ok()) return Fail(pulled);
    MutexLock lock(&mu_);
    answer(step);
    shards_missing_[v] -= static_cast<int>(mine.size());
    changed_.notify_all();
  }
  if (answered) return;
  // A ps that holds none of the variables still tells its step.
  std::map<std::string, Tensor> none;
  int64_t step = 0;
  const Status pulled = client->Pull(placement.fingerprint, {}, &none, &step, min_step_, wait_);
  if (!pulled.ok()) return Fail(pulled);
  MutexLock lock(&mu_);
  answer(step);
  changed_.notify_all();
}

void StreamedPull::Fail(const Status& error) {
  MutexLock lock(&mu_);
  if (error_.ok()) error_ = error;
  changed_.notify_all();
}

Status StreamedPull::WaitSteps(PsFleet::PsSteps* steps) {
  MutexLock lock(&mu_);
  changed_.wait(*lock.native(), [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !error_.ok() || steps_known_ == fleet_->num_ps();
  });
  PS_RETURN_IF_ERROR(error_);
  *steps = steps_;
  return OkStatus();
}

Status StreamedPull::Wait(size_t v) {
  MutexLock lock(&mu_);
  changed_.wait(*lock.native(), [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !error_.ok() || shards_missing_[v] == 0;
  });
  return shards_missing_[v] == 0 ? OkStatus() : error_;
}

Status StreamedPull::Finish() {
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  MutexLock lock(&mu_);
  if (!buffers_.empty()) {
    fleet_->ReturnPullBuffers(&buffers_, !error_.ok());
    buffers_.clear();
  }
  return error_;
}

StreamedPush::StreamedPush(PsFleet* fleet, int worker, int64_t local_step,
                           const PsFleet::PsSteps& pulled, bool sync, uint64_t sequence)
    : fleet_(fleet), queues_(fleet->num_ps()), sent_(fleet->variables_.size(), false) {
  result_.sequence = sequence;
  result_.steps.resize(fleet_->num_ps());
  result_.outcomes.resize(fleet_->num_ps());
  for (int ps = 0; ps < fleet_->num_ps(); ++ps) {
    threads_.emplace_back(&StreamedPush::PushToPs, this, ps,
                          fleet_->PushHeaderFor(ps, worker, local_step, pulled, sync, sequence));
  }
}

StreamedPush::~StreamedPush() {
  {
    MutexLock lock(&mu_);
    if (!ending_) aborting_ = true;
    changed_.notify_all();
  }
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

Status StreamedPush::Send(size_t v, const Tensor& grad) {
  MutexLock lock(&mu_);
  if (!error_.ok()) return error_;
  const std::vector<cluster::VariableInfo>& variables = fleet_->variables_;
  if (v >= variables.size() || sent_[v] || grad.shape() != variables[v].shape) {
    error_ = InvalidArgument(
        v >= variables.size()
            ? "a push of variable " + std::to_string(v) + " of " + std::to_string(variables.size())
        : sent_[v]
            ? "the gradient of " + variables[v].name + " sent twice in one push"
            : "the gradient of " + variables[v].name + " has shape " + ShapeString(grad.shape()) +
                  ", the variable " + ShapeString(variables[v].shape));
    aborting_ = true;  // every ps's push cut off unfinished
    changed_.notify_all();
    return error_;
  }
  sent_[v] = true;
  for (const cluster::Shard* shard :
       fleet_->placement_.ShardsOfVariable(fleet_->variables_[v].name)) {
    queues_[shard->ps].push_back({shard, &grad});
  }
  changed_.notify_all();
  return error_;
}

void StreamedPush::PushToPs(int ps, proto::PushHeader header) {
  PsConnection* client = fleet_->clients_[ps].get();
  auto stream = client->StartPush(header);
  auto fail = [this](const Status& error) {
    MutexLock lock(&mu_);
    if (error_.ok()) error_ = error;
  };
  if (!stream.ok()) return fail(stream.status());
  std::deque<Tensor> slices;  // sent from here; kept until the push ends
  for (;;) {
    Item item;
    {
      MutexLock lock(&mu_);
      changed_.wait(*lock.native(), [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return aborting_ || ending_ || !queues_[ps].empty();
      });
      if (aborting_) return;  // the stream goes unfinished: the ps drops it
      if (queues_[ps].empty()) break;
      item = queues_[ps].front();
      queues_[ps].pop_front();
    }
    const Tensor* tensor = item.whole;
    if (item.shard->num_parts > 1) {
      slices.push_back(SliceRows(*item.whole, *item.shard));
      tensor = &slices.back();
    }
    const Status written = (*stream)->Write(item.shard->name, *tensor);
    if (!written.ok()) return fail(written);
  }
  auto response = (*stream)->Finish();
  if (!response.ok()) return fail(response.status());
  result_.steps[ps] = response->global_step();
  result_.outcomes[ps] = response->outcome();
}

StatusOr<PsFleet::PushResult> StreamedPush::Finish() {
  {
    MutexLock lock(&mu_);
    const auto unsent = std::find(sent_.begin(), sent_.end(), false);
    if (error_.ok() && unsent != sent_.end()) {
      error_ = InvalidArgument("a push without the gradient of " +
                               fleet_->variables_[unsent - sent_.begin()].name);
    }
    if (error_.ok()) {
      ending_ = true;
    } else {
      aborting_ = true;
    }
    changed_.notify_all();
  }
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  MutexLock lock(&mu_);
  PS_RETURN_IF_ERROR(error_);
  return result_;
}

}  // namespace pstrain
