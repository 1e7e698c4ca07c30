// Per-class free lists for the engine's small, hot objects (nodes, handles,
// storages, buffers): every recorded op allocates a few of them and every
// collected wrapper frees them, so malloc and free were a third of the
// recording cost. Each thread keeps its own list (capped), so no lock is
// taken; a block freed on another thread simply joins that thread's list.
#pragma once

#include <cstddef>
#include <new>

namespace cumo {

template <size_t Size> class FreeList {
public:
  static void *allocate() {
    Lists &l = lists();
    if (l.head) {
      Block *b = l.head;
      l.head = b->next;
      --l.count;
      // Blocks come back in batches (a GC's worth of wrappers), so the
      // list runs through memory that has gone cold by the time it is
      // handed out again: fetch the next block now, for the writes of the
      // constructor that will take it, instead of missing on it then.
      if (l.head) {
        const char *next = reinterpret_cast<const char *>(l.head);
        for (size_t off = 0; off < Size; off += 64)
          __builtin_prefetch(next + off, 1);
        __builtin_prefetch(next + Size - 1, 1);
      }
      return b;
    }
    return ::operator new(Size < sizeof(Block) ? sizeof(Block) : Size);
  }
  static void release(void *p) {
    Lists &l = lists();
    if (l.count >= kCap) {
      ::operator delete(p);
      return;
    }
    Block *b = static_cast<Block *>(p);
    b->next = l.head;
    l.head = b;
    ++l.count;
  }

private:
  struct Block {
    Block *next;
  };
  struct Lists {
    Block *head = nullptr;
    size_t count = 0;
    ~Lists() {
      while (head) {
        Block *next = head->next;
        ::operator delete(head);
        head = next;
      }
    }
  };
  /// Enough for a loop's steady state; beyond it blocks go back to malloc.
  static constexpr size_t kCap = 1 << 14;
  static Lists &lists() {
    thread_local Lists l;
    return l;
  }
};

/// Gives a class operator new and delete from its FreeList.
#define CUMO_FREE_LIST_ALLOCATED(Class)                                        \
  static void *operator new(size_t size) {                                     \
    return size == sizeof(Class) ? FreeList<sizeof(Class)>::allocate()         \
                                 : ::operator new(size);                       \
  }                                                                            \
  static void operator delete(void *p, size_t size) {                          \
    if (size == sizeof(Class))                                                 \
      FreeList<sizeof(Class)>::release(p);                                     \
    else                                                                       \
      ::operator delete(p);                                                    \
  }

} // namespace cumo
