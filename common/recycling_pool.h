// Objects whose memory is worth keeping between uses (pictures, half-pel planes): a shared_ptr handed out by take()
// returns its object to the pool when the last holder lets go, on whatever thread that is, instead of freeing it.
// Why not a list the owner refills itself: the holders of a reconstruction include the driver (EncodedPicture::recon,
// written and measured on its own thread), so the owner cannot know when a picture is free, and fresh pictures and
// planes cost their page faults again, on the one thread that prepares a picture while the other workers wait.
#pragma once
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace gme {

template <typename T>
class RecyclingPool {
 public:
  // `clean` runs on an object as it comes back (e.g. to drop what it points to), before it is kept; at most `keep`
  // objects are kept, the others freed.
  explicit RecyclingPool(size_t keep, void (*clean)(T&) = nullptr) : home_(std::make_shared<Home>(keep, clean)) {}

  // A kept object as its last use left it (after `clean`), or a new one.
  std::shared_ptr<T> take() {
    std::unique_ptr<T> t;
    {
      std::lock_guard<std::mutex> lock(home_->m);
      if (!home_->kept.empty()) {
        t = std::move(home_->kept.back());
        home_->kept.pop_back();
      }
    }
    if (!t) t = std::make_unique<T>();
    // The deleter holds the pool weakly: an object outliving its pool is simply freed.
    std::weak_ptr<Home> home = home_;
    return std::shared_ptr<T>(t.release(), [home](T* p) {
      std::unique_ptr<T> back(p);
      if (std::shared_ptr<Home> h = home.lock()) h->give_back(std::move(back));
    });
  }

  size_t kept() const {
    std::lock_guard<std::mutex> lock(home_->m);
    return home_->kept.size();
  }

 private:
  struct Home {
    Home(size_t k, void (*c)(T&)) : keep(k), clean(c) {}
    void give_back(std::unique_ptr<T> t) {
      if (clean) clean(*t);  // outside the lock: it may return other objects to their pools
      std::lock_guard<std::mutex> lock(m);
      if (kept.size() < keep) kept.push_back(std::move(t));
    }
    const size_t keep;
    void (*const clean)(T&);
    mutable std::mutex m;
    std::vector<std::unique_ptr<T>> kept;
  };
  std::shared_ptr<Home> home_;
};

}  // namespace gme
