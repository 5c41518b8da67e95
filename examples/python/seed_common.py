"""What the three seed examples share: numba or a skip, a best-of timer, and the
report (both times, the ratio, whether they agree)."""
import time


def numba_or_skip():
    """numba's module, or None after printing the skip (the caller exits 77)."""
    try:
        import numba
        return numba
    except ImportError:
        print("skipped: no numba (Debian: python3-numba)")
        return None


def best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def report(title, seed_label, t_seed, kmini_label, t_kmini, rate, agreement, agree):
    """Prints the comparison; returns the exit status (0 when they agree). `rate(t)` formats a throughput."""
    print(title)
    print(f"  {seed_label:<34}{t_seed:10.4f} s  {rate(t_seed)}")
    print(f"  {kmini_label:<34}{t_kmini:10.4f} s  {rate(t_kmini)}  ({t_seed / t_kmini:.1f}x)")
    print(f"  {agreement}{'' if agree else ': DISAGREE'}")
    return 0 if agree else 1
