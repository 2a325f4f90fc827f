/* Single-thread sgemm and ssyrk rates of whatever CBLAS this is linked
 * with (bench/cpu/blas_choice.sh builds it against several): best of 8
 * runs at n = 1024, on random data. Prints two lines. */
#include BLAS_HEADER
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void) {
  const int n = 1024;
  float *a = malloc(sizeof(float) * n * n), *b = malloc(sizeof(float) * n * n),
        *c = malloc(sizeof(float) * n * n);
  for (int i = 0; i < n * n; i++) {
    a[i] = rand() / (float)RAND_MAX;
    b[i] = 0.5f * a[i];
  }
  double best = 1e9;
  for (int r = 0; r < 8; r++) {
    double t = now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f, a, n,
                b, n, 0.f, c, n);
    t = now() - t;
    if (t < best)
      best = t;
  }
  printf("sgemm %d^3: %.1f GFLOP/s\n", n, 2.0 * n * n * n / best / 1e9);
  best = 1e9;
  for (int r = 0; r < 8; r++) {
    double t = now();
    cblas_ssyrk(CblasRowMajor, CblasUpper, CblasNoTrans, n, n, 1.f, a, n, 0.f,
                c, n);
    t = now() - t;
    if (t < best)
      best = t;
  }
  /* ssyrk computes one triangle: n^3 FLOPs (half of the full product). */
  printf("ssyrk %d: %.1f GFLOP/s\n", n, 1.0 * n * n * n / best / 1e9);
  free(a);
  free(b);
  free(c);
  return 0;
}
