// GatheringReader: a client-streaming call (Init, Push, ImportRows) whose
// messages are gathered on gRPC's callback reactor, holding no thread of
// the ps while they come, and served by a blocking handler on a thread of
// the ps's request pool once
//   - the stream has ended (its bytes are all in: the usual case), or
//   - the call holds `gather_bytes` (a large push: its thread takes what is
//     gathered and reads the rest as it comes, straight into place, as the
//     tensor channel does), or
//   - all calls together hold `max_gathered_bytes` (each is then served as
//     it stands).
// So a client that opens a push and stalls, or streams it while its
// backward runs, costs the ps memory, not a thread. A stream that sends no
// message for `idle` is cancelled (StreamWatch): its handler sees it break
// off and applies nothing (one not yet begun takes a thread only for that,
// the stream's messages all in).
//
// Thread-safety: gRPC's callback threads run the reactions; the handler
// runs on a pool thread and is the only caller of Read. The reactor
// finishes its call once and deletes itself in OnDone.
#ifndef PSTRAIN_PS_RPC_GATHERING_READER_H_
#define PSTRAIN_PS_RPC_GATHERING_READER_H_

#include <google/protobuf/message_lite.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <thread>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/mutex.h"
#include "core/thread_pool.h"

namespace pstrain {

struct StreamLimits {
  // Bytes of one call gathered before a thread serves it (and reads on).
  size_t gather_bytes = size_t{1} << 20;
  // Bytes all calls together may hold while they gather; past them, a call
  // is served as it stands.
  uint64_t max_gathered_bytes = uint64_t{256} << 20;
  // The longest a stream may go without a message before it is cancelled.
  std::chrono::milliseconds idle{60000};
};

// What the streams of one service share: the bytes they hold, and one
// thread that cancels those idle past the limit, however many there are.
//
// Thread-safe. The destructor ends the thread; every stream watched must
// have been unwatched by then (the server is shut down first).
class StreamWatch {
 public:
  explicit StreamWatch(const StreamLimits& limits, Clock* clock = Clock::Real());
  ~StreamWatch();
  StreamWatch(const StreamWatch&) = delete;
  StreamWatch& operator=(const StreamWatch&) = delete;

  const StreamLimits& limits() const { return limits_; }

  // ctx is cancelled (TryCancel) once `idle` passes before Unwatch (the
  // reader watches each read it starts until it completes).
  void Watch(grpc::ServerContextBase* ctx, const char* call);
  // After it returns the watch never touches ctx again (it waits for a
  // cancel of ctx under way on the watch's thread, unless called from
  // within it).
  void Unwatch(grpc::ServerContextBase* ctx);

  // Bytes gathered (positive) or handed on (negative).
  void Hold(int64_t bytes) { held_ += bytes; }
  bool full() const { return held_.load() >= static_cast<int64_t>(limits_.max_gathered_bytes); }

  // For tests and logs.
  int64_t held_bytes() const { return held_.load(); }
  int watched() const;
  uint64_t cancelled() const { return cancelled_.load(); }

 private:
  struct Watched {
    const char* call;
    Clock::TimePoint last;
  };
  void Run();

  const StreamLimits limits_;
  Clock* const clock_;
  std::atomic<int64_t> held_{0};
  std::atomic<uint64_t> cancelled_{0};
  mutable Mutex mu_;
  std::condition_variable changed_;
  std::map<grpc::ServerContextBase*, Watched> watched_ ABSL_GUARDED_BY(mu_);
  // Being cancelled by the watch's thread, with mu_ let go (TryCancel may
  // run the call's reactions on the calling thread).
  std::vector<grpc::ServerContextBase*> cancelling_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: it starts once the rest is built
};

// The bytes a message holds.
inline size_t MessageBytes(const grpc::ByteBuffer& m) { return m.Length(); }
inline size_t MessageBytes(const google::protobuf::MessageLite& m) { return m.ByteSizeLong(); }

template <typename Message>
class GatheringReader : public grpc::ServerReadReactor<Message> {
 public:
  using Handler = std::function<grpc::Status(GatheringReader*)>;

  // Gathers ctx's stream; `handler` serves it on a thread of `pool` as the
  // header says. `call` names it in logs ("Push").
  GatheringReader(grpc::CallbackServerContext* ctx, StreamWatch* watch, ThreadPool* pool,
                  const char* call, Handler handler)
      : ctx_(ctx), watch_(watch), pool_(pool), call_(call), handler_(std::move(handler)) {
    {
      MutexLock lock(&mu_);
      reading_ = true;
    }
    BeginRead();
  }

  // Handler thread: the next message; false at the end of the stream, or
  // once it broke off (ctx->IsCancelled() then says so).
  bool Read(Message* message) {
    MutexLock lock(&mu_);
    for (;;) {
      if (!queue_.empty()) {
        Take(message);
        const bool read = ReadOnLocked(watch_->full());
        lock.Unlock();
        if (read) BeginRead();
        return true;
      }
      if (ended_) return false;
      if (!reading_) {  // what was gathered is taken: read on
        reading_ = true;
        lock.Unlock();
        BeginRead();
        lock.Lock();
        continue;
      }
      arrived_.wait(*lock.native());
    }
  }

  void OnReadDone(bool ok) override {
    // Idle time counts only while a read waits for the client: not while
    // the ps itself holds the stream back.
    watch_->Unwatch(ctx_);
    bool serve = false, read = false;
    {
      MutexLock lock(&mu_);
      reading_ = false;
      if (finished_) return;
      if (ok) {
        const size_t n = MessageBytes(incoming_);
        queue_.push_back(std::move(incoming_));
        incoming_ = Message();
        bytes_ += n;
        watch_->Hold(static_cast<int64_t>(n));
      } else {
        ended_ = true;
      }
      // A stream that broke off is served too, briefly: its handler finds
      // where it breaks off and refuses it, as a transport-neutral core
      // counts and logs it.
      // full() read once: a call is either served or reading on.
      const bool full = watch_->full();
      if (!serving_ && (!ok || bytes_ >= watch_->limits().gather_bytes || full)) {
        serving_ = serve = true;
      }
      read = ok && ReadOnLocked(full);
      // Under the lock: the handler may finish the call, and gRPC delete
      // the reactor, as soon as it sees what came.
      arrived_.notify_all();
    }
    if (read) BeginRead();
    if (serve) {
      pool_->Submit([this] {
        {
          MutexLock lock(&mu_);
          begun_ = true;
        }
        Done(handler_(this));
      });
    }
  }

  void OnDone() override {
    // gRPC calls this after Finish, so the handler's last writes are done;
    // the lock says so where gRPC's own ordering cannot be seen (TSan).
    { MutexLock lock(&mu_); }
    delete this;
  }

 private:
  // The front message into *message, its bytes handed on.
  void Take(Message* message) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    *message = std::move(queue_.front());
    queue_.pop_front();
    const size_t n = MessageBytes(*message);
    bytes_ -= n;
    watch_->Hold(-static_cast<int64_t>(n));
  }
  // Whether to start the next read now (and marks it started): while the
  // call holds less than gather_bytes, and, with all calls' bytes past
  // their cap (`full`), only once its handler reads it.
  bool ReadOnLocked(bool full) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (reading_ || ended_ || finished_ || bytes_ >= watch_->limits().gather_bytes) return false;
    if (full && !begun_) return false;
    reading_ = true;
    return true;
  }
  // Starts a read, watched for idleness until it completes.
  void BeginRead() {
    watch_->Watch(ctx_, call_);
    this->StartRead(&incoming_);
  }
  // Finishes the call once (the handler's last touch: OnDone may delete
  // the reactor as soon as Finish is called).
  void Done(const grpc::Status& status) {
    watch_->Unwatch(ctx_);
    {
      MutexLock lock(&mu_);
      finished_ = true;
      watch_->Hold(-static_cast<int64_t>(bytes_));
      bytes_ = 0;
      queue_.clear();
    }
    this->Finish(status);
  }

  grpc::CallbackServerContext* const ctx_;
  StreamWatch* const watch_;
  ThreadPool* const pool_;
  const char* const call_;
  const Handler handler_;
  Message incoming_;  // gRPC's while a read is under way
  Mutex mu_;
  std::condition_variable arrived_;
  std::deque<Message> queue_ ABSL_GUARDED_BY(mu_);
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;  // of queue_
  bool reading_ ABSL_GUARDED_BY(mu_) = false;
  bool ended_ ABSL_GUARDED_BY(mu_) = false;    // no message will come
  bool serving_ ABSL_GUARDED_BY(mu_) = false;  // the handler has been submitted
  bool begun_ ABSL_GUARDED_BY(mu_) = false;    // and has begun
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

using GatheringByteReader = GatheringReader<grpc::ByteBuffer>;

}  // namespace pstrain

#endif  // PSTRAIN_PS_RPC_GATHERING_READER_H_
