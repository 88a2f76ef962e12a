// Mutex, SharedMutex and their scoped locks: the standard ones, annotated
// for clang's thread-safety analysis (absl/base/thread_annotations.h), as
// LevelDB's port::Mutex is. A member a mutex guards says so with
// ABSL_GUARDED_BY, a function that needs it held with
// ABSL_EXCLUSIVE_LOCKS_REQUIRED; the clang build (-Wthread-safety, as
// errors) then refuses code that touches it without the lock.
//
// A condition variable waits with MutexLock::native(); its predicate, a
// lambda, states the lock it runs under:
//   cv_.wait(*lock.native(), [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { ... });
#ifndef PSTRAIN_CORE_MUTEX_H_
#define PSTRAIN_CORE_MUTEX_H_

#include <absl/base/thread_annotations.h>

#include <mutex>
#include <shared_mutex>

namespace pstrain {

class ABSL_LOCKABLE Mutex {
 public:
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }

 private:
  friend class MutexLock;
  std::mutex mu_;
};

// Holds a Mutex for its scope. Unlock and Lock let it go and take it back in
// between, for a call made without it.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : lock_(mu->mu_) {}
  ~MutexLock() ABSL_UNLOCK_FUNCTION() {}
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() ABSL_UNLOCK_FUNCTION() { lock_.unlock(); }
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { lock_.lock(); }
  // What a std::condition_variable (or a Clock) waits with.
  std::unique_lock<std::mutex>* native() { return &lock_; }

 private:
  std::unique_lock<std::mutex> lock_;
};

// Many readers or one writer.
class ABSL_LOCKABLE SharedMutex {
 private:
  friend class ReaderLock;
  friend class WriterLock;
  std::shared_mutex mu_;
};

class ABSL_SCOPED_LOCKABLE ReaderLock {
 public:
  explicit ReaderLock(SharedMutex* mu) ABSL_SHARED_LOCK_FUNCTION(mu) : lock_(mu->mu_) {}
  ~ReaderLock() ABSL_UNLOCK_FUNCTION() {}
  ReaderLock(const ReaderLock&) = delete;
  ReaderLock& operator=(const ReaderLock&) = delete;

 private:
  std::shared_lock<std::shared_mutex> lock_;
};

class ABSL_SCOPED_LOCKABLE WriterLock {
 public:
  explicit WriterLock(SharedMutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : lock_(mu->mu_) {}
  ~WriterLock() ABSL_UNLOCK_FUNCTION() {}
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  std::unique_lock<std::shared_mutex> lock_;
};

}  // namespace pstrain

#endif  // PSTRAIN_CORE_MUTEX_H_
