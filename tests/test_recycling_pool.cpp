// common/recycling_pool.h: objects come back when their last holder lets go, cleaned, up to the pool's limit.
#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "common/recycling_pool.h"

namespace gme {
namespace {

struct Item {
  int value = 0;
  std::shared_ptr<int> attached;
};

TEST(RecyclingPool, ObjectComesBackCleanedWhenItsLastHolderLetsGo) {
  RecyclingPool<Item> pool(2, [](Item& i) { i.attached.reset(); });
  std::shared_ptr<Item> a = pool.take();
  Item* const address = a.get();
  a->value = 7;
  auto attached = std::make_shared<int>(1);
  a->attached = attached;
  std::shared_ptr<Item> second_holder = a;
  a.reset();
  EXPECT_EQ(pool.kept(), 0u) << "still held by a second holder";
  second_holder.reset();
  EXPECT_EQ(pool.kept(), 1u);
  EXPECT_EQ(attached.use_count(), 1) << "clean dropped what the object pointed to";
  std::shared_ptr<Item> b = pool.take();
  EXPECT_EQ(b.get(), address) << "the kept object, not a new one";
  EXPECT_EQ(b->value, 7) << "as its last use left it";
  EXPECT_EQ(pool.kept(), 0u);
}

TEST(RecyclingPool, KeepsAtMostItsLimit) {
  RecyclingPool<Item> pool(2);
  std::vector<std::shared_ptr<Item>> held;
  for (int i = 0; i < 5; ++i) held.push_back(pool.take());
  held.clear();
  EXPECT_EQ(pool.kept(), 2u);
  std::shared_ptr<Item> x = pool.take(), y = pool.take(), z = pool.take();
  EXPECT_NE(x.get(), y.get());
  EXPECT_NE(y.get(), z.get());
  EXPECT_EQ(pool.kept(), 0u);
}

TEST(RecyclingPool, ObjectOutlivingItsPoolIsFreed) {
  std::shared_ptr<Item> survivor;
  {
    RecyclingPool<Item> pool(4);
    survivor = pool.take();
    survivor->value = 3;
  }
  survivor.reset();  // the pool is gone: freed (ASan and LeakSanitizer check it in make sanitize)
  SUCCEED();
}

TEST(RecyclingPool, HoldersOnOtherThreadsGiveBack) {
  RecyclingPool<Item> pool(64);
  std::vector<std::shared_ptr<Item>> items;
  for (int i = 0; i < 64; ++i) items.push_back(pool.take());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([part = std::vector<std::shared_ptr<Item>>(items.begin() + 16 * t,
                                                                     items.begin() + 16 * (t + 1))]() mutable {
      part.clear();
    });
  items.clear();
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(pool.kept(), 64u);
}

}  // namespace
}  // namespace gme
