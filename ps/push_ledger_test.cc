// PushLedger: a push applied once per (worker, incarnation, sequence),
// whatever comes again.
#include "ps/push_ledger.h"
#include "core/testing/status_assertions.h"

#include <gtest/gtest.h>

namespace pstrain {
namespace {

proto::PushHeader Header(int worker, uint64_t incarnation, uint64_t sequence) {
  proto::PushHeader h;
  h.set_worker(worker);
  h.set_incarnation(incarnation);
  h.set_sequence(sequence);
  return h;
}

proto::PushResponse Answer(int64_t step) {
  proto::PushResponse r;
  r.set_global_step(step);
  return r;
}

TEST(PushLedger, APushAppliedComesAgainWithItsFirstAnswer) {
  PushLedger ledger;
  auto first = ledger.Begin(Header(3, 77, 1));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(first->repeat);
  ledger.End(*first, Answer(10));
  auto again = ledger.Begin(Header(3, 77, 1));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->repeat);
  EXPECT_EQ(again->answer.global_step(), 10);
  // The next push is new; another worker's sequence is its own.
  auto next = ledger.Begin(Header(3, 77, 2));
  PS_ASSERT_OK(next);
  EXPECT_FALSE(next->repeat);
  auto other = ledger.Begin(Header(4, 5, 1));
  PS_ASSERT_OK(other);
  EXPECT_FALSE(other->repeat);
}

TEST(PushLedger, OneStillBeingAppliedIsToBeAskedAgain) {
  PushLedger ledger;
  auto first = ledger.Begin(Header(0, 1, 5));
  PS_ASSERT_OK(first);
  const auto during = ledger.Begin(Header(0, 1, 5));
  ASSERT_FALSE(during.ok());
  EXPECT_EQ(during.status().code(), Code::kUnavailable) << during.status().ToString();
  ledger.End(*first, Answer(1));
  auto after = ledger.Begin(Header(0, 1, 5));
  PS_ASSERT_OK(after);
  EXPECT_TRUE(after->repeat);
}

// A push the ps refused changed nothing: the same one may come again and
// be applied.
TEST(PushLedger, ARefusedPushMayComeAgainToBeApplied) {
  PushLedger ledger;
  auto first = ledger.Begin(Header(0, 1, 1));
  PS_ASSERT_OK(first);
  ledger.End(*first, InvalidArgument("stale placement"));
  auto again = ledger.Begin(Header(0, 1, 1));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(again->repeat);
}

TEST(PushLedger, AnOlderPushIsRefusedAndANewIncarnationStartsOver) {
  PushLedger ledger;
  for (uint64_t seq : {1, 2, 3}) {
    auto t = ledger.Begin(Header(0, 1, seq));
    PS_ASSERT_OK(t);
    ledger.End(*t, Answer(static_cast<int64_t>(seq)));
  }
  const auto old = ledger.Begin(Header(0, 1, 2));
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.status().code(), Code::kFailedPrecondition) << old.status().ToString();
  // The worker restarted: its numbers begin again.
  auto restarted = ledger.Begin(Header(0, 2, 1));
  ASSERT_TRUE(restarted.ok()) << restarted.status().ToString();
  EXPECT_FALSE(restarted->repeat);
  // Cleared (the ps's variables replaced): nothing is a repeat.
  ledger.End(*restarted, Answer(1));
  ledger.Clear();
  auto cleared = ledger.Begin(Header(0, 2, 1));
  PS_ASSERT_OK(cleared);
  EXPECT_FALSE(cleared->repeat);
}

TEST(PushLedger, APushWithoutASequenceIsAlwaysApplied) {
  PushLedger ledger;
  for (int i = 0; i < 3; ++i) {
    auto t = ledger.Begin(Header(0, 0, 0));
    PS_ASSERT_OK(t);
    EXPECT_FALSE(t->repeat);
    ledger.End(*t, Answer(i));
  }
}

}  // namespace
}  // namespace pstrain
