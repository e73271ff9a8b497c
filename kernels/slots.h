/*
 * slots.h - the one list of kernel slots, read with a TF_KERNEL macro of
 * the reader's (an X-macro, in the spirit of ggml's single op list).
 * kernels.h makes struct tf_kernels of it; device.c the CPU table and
 * every dispatcher with its fallback (libtfcore/include/tf/device.h
 * declares the dispatchers); kernels/cuda/module.c and the fake GPU
 * their wrappers; tests/gpu/test_kernels.c names the test of each.  A new
 * kernel is a line here, its CPU body (TWIN_cpu in kernels/cpu/, declared
 * in kernels.h) and its CUDA launcher (TWIN_cuda in kernels/cuda/), and
 * the build fails until each exists.  No include guard: read once per
 * TF_KERNEL.
 *
 *   TF_KERNEL(slot, twin, api, ret, (params), (args), (pointers), (staged))
 *
 * slot      the struct tf_kernels member
 * twin      TWIN_cpu and TWIN_cuda, the CPU body and the CUDA launcher
 * api       the dispatcher libtfcore exports: api(struct tf_device *d, ...)
 * ret       void or double (a loss's mean)
 * params    the parameter list; args, its names
 * pointers  the arguments in the device's memory
 * staged    the arguments of the CPU fallback over host copies:
 *           IN(p) read, OUT(p) written (and read), IDS(p) int64 ids
 *
 * The optimizers' update (tf_update()) has a slot of its own in
 * kernels.h: its slots argument is an array of pointers.
 */
TF_KERNEL(gemm, gemm, tf_gemm, void,
          (int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
           const float *a, const float *b, float beta, float *c),
          (ta, tb, m, n, k, alpha, a, b, beta, c), (a, b, c),
          (ta, tb, m, n, k, alpha, IN(a), IN(b), beta, OUT(c)))
TF_KERNEL(add_bias, add_bias, tf_add_bias, void,
          (float *y, const float *b, int64_t rows, int64_t cols),
          (y, b, rows, cols), (y, b), (OUT(y), IN(b), rows, cols))
TF_KERNEL(bias_grad, bias_grad, tf_bias_grad, void,
          (const float *dy, float *db, int64_t rows, int64_t cols),
          (dy, db, rows, cols), (dy, db), (IN(dy), OUT(db), rows, cols))
TF_KERNEL(copy, copy, tf_copy, void, (const float *x, float *y, size_t n),
          (x, y, n), (x, y), (IN(x), OUT(y), n))
TF_KERNEL(zero, zero, tf_zero, void, (float *y, size_t n), (y, n), (y),
          (OUT(y), n))
TF_KERNEL(add, add, tf_add, void, (const float *x, float *y, size_t n),
          (x, y, n), (x, y), (IN(x), OUT(y), n))
TF_KERNEL(relu, relu_forward, tf_relu, void,
          (const float *x, float *y, size_t n), (x, y, n), (x, y),
          (IN(x), OUT(y), n))
TF_KERNEL(relu_grad, relu_backward, tf_relu_grad, void,
          (const float *y, const float *dy, float *dx, size_t n),
          (y, dy, dx, n), (y, dy, dx), (IN(y), IN(dy), OUT(dx), n))
TF_KERNEL(sigmoid, sigmoid_forward, tf_sigmoid, void,
          (const float *x, float *y, size_t n), (x, y, n), (x, y),
          (IN(x), OUT(y), n))
TF_KERNEL(sigmoid_grad, sigmoid_backward, tf_sigmoid_grad, void,
          (const float *y, const float *dy, float *dx, size_t n),
          (y, dy, dx, n), (y, dy, dx), (IN(y), IN(dy), OUT(dx), n))
TF_KERNEL(tanh, tanh_forward, tf_tanh, void,
          (const float *x, float *y, size_t n), (x, y, n), (x, y),
          (IN(x), OUT(y), n))
TF_KERNEL(tanh_grad, tanh_backward, tf_tanh_grad, void,
          (const float *y, const float *dy, float *dx, size_t n),
          (y, dy, dx, n), (y, dy, dx), (IN(y), IN(dy), OUT(dx), n))
TF_KERNEL(softmax, softmax_forward, tf_softmax, void,
          (const float *x, float *y, int64_t rows, int64_t cols),
          (x, y, rows, cols), (x, y), (IN(x), OUT(y), rows, cols))
TF_KERNEL(softmax_grad, softmax_backward, tf_softmax_grad, void,
          (const float *y, const float *dy, float *dx, int64_t rows,
           int64_t cols),
          (y, dy, dx, rows, cols), (y, dy, dx),
          (IN(y), IN(dy), OUT(dx), rows, cols))
TF_KERNEL(dropout, dropout_forward, tf_dropout, void,
          (const float *x, float *y, float *mask, size_t n, float keep,
           uint64_t seed),
          (x, y, mask, n, keep, seed), (x, y, mask),
          (IN(x), OUT(y), OUT(mask), n, keep, seed))
TF_KERNEL(dropout_grad, dropout_backward, tf_dropout_grad, void,
          (const float *mask, const float *dy, float *dx, size_t n),
          (mask, dy, dx, n), (mask, dy, dx), (IN(mask), IN(dy), OUT(dx), n))
TF_KERNEL(bn_train, batchnorm_train, tf_batchnorm_train, void,
          (const float *x, float *y, float *xhat, float *inv_std,
           const float *gamma, const float *beta, float *mean_avg,
           float *var_avg, int64_t rows, int64_t cols, float eps,
           float momentum),
          (x, y, xhat, inv_std, gamma, beta, mean_avg, var_avg, rows, cols, eps,
           momentum),
          (x, y, xhat, inv_std, gamma, beta, mean_avg, var_avg),
          (IN(x), OUT(y), OUT(xhat), OUT(inv_std), IN(gamma), IN(beta),
           OUT(mean_avg), OUT(var_avg), rows, cols, eps, momentum))
TF_KERNEL(bn_infer, batchnorm_infer, tf_batchnorm_infer, void,
          (const float *x, float *y, const float *gamma, const float *beta,
           const float *mean_avg, const float *var_avg, int64_t rows,
           int64_t cols, float eps),
          (x, y, gamma, beta, mean_avg, var_avg, rows, cols, eps),
          (x, y, gamma, beta, mean_avg, var_avg),
          (IN(x), OUT(y), IN(gamma), IN(beta), IN(mean_avg), IN(var_avg), rows,
           cols, eps))
TF_KERNEL(bn_grad, batchnorm_backward, tf_batchnorm_grad, void,
          (const float *dy, const float *xhat, const float *inv_std,
           const float *gamma, float *dx, float *dgamma, float *dbeta,
           int64_t rows, int64_t cols),
          (dy, xhat, inv_std, gamma, dx, dgamma, dbeta, rows, cols),
          (dy, xhat, inv_std, gamma, dx, dgamma, dbeta),
          (IN(dy), IN(xhat), IN(inv_std), IN(gamma), OUT(dx), OUT(dgamma),
           OUT(dbeta), rows, cols))
TF_KERNEL(softmax_xent, softmax_xent, tf_softmax_xent, double,
          (const float *logits, const float *labels, float *dlogits,
           float scale, int64_t rows, int64_t cols),
          (logits, labels, dlogits, scale, rows, cols),
          (logits, labels, dlogits),
          (IN(logits), IN(labels), OUT(dlogits), scale, rows, cols))
TF_KERNEL(sigmoid_xent, sigmoid_xent, tf_sigmoid_xent, double,
          (const float *logits, const float *labels, float *dlogits,
           float scale, int64_t rows),
          (logits, labels, dlogits, scale, rows), (logits, labels, dlogits),
          (IN(logits), IN(labels), OUT(dlogits), scale, rows))
TF_KERNEL(mse, mse, tf_mse, double,
          (const float *pred, const float *target, float *dpred, float scale,
           int64_t rows, int64_t cols),
          (pred, target, dpred, scale, rows, cols), (pred, target, dpred),
          (IN(pred), IN(target), OUT(dpred), scale, rows, cols))
TF_KERNEL(copy_cols, copy_cols, tf_copy_cols, void,
          (const float *x, int64_t xstride, float *y, int64_t ystride,
           int64_t rows, int64_t cols),
          (x, xstride, y, ystride, rows, cols), (x, y),
          (IN(x), xstride, OUT(y), ystride, rows, cols))
TF_KERNEL(add_cols, add_cols, tf_add_cols, void,
          (const float *x, int64_t xstride, float *y, int64_t ystride,
           int64_t rows, int64_t cols),
          (x, xstride, y, ystride, rows, cols), (x, y),
          (IN(x), xstride, OUT(y), ystride, rows, cols))
TF_KERNEL(gather, gather, tf_gather, void,
          (const float *table, int64_t vocab, int64_t dim, const int64_t *ids,
           int64_t stride, int64_t rows, int64_t width, int combiner, float *y),
          (table, vocab, dim, ids, stride, rows, width, combiner, y),
          (table, ids, y),
          (IN(table), vocab, dim, IDS(ids), stride, rows, width, combiner,
           OUT(y)))
TF_KERNEL(scatter, scatter, tf_scatter, void,
          (const float *dy, int64_t vocab, int64_t dim, const int64_t *ids,
           int64_t stride, int64_t rows, int64_t width, int combiner,
           float *dtable),
          (dy, vocab, dim, ids, stride, rows, width, combiner, dtable),
          (dy, ids, dtable),
          (IN(dy), vocab, dim, IDS(ids), stride, rows, width, combiner,
           OUT(dtable)))
TF_KERNEL(gather_w, gather_w, tf_gather_weighted, void,
          (const float *table, int64_t vocab, int64_t dim, const int64_t *ids,
           int64_t stride, const float *w, int64_t wstride, int64_t rows,
           int64_t width, int combiner, float *y),
          (table, vocab, dim, ids, stride, w, wstride, rows, width, combiner,
           y),
          (table, ids, w, y),
          (IN(table), vocab, dim, IDS(ids), stride, IN(w), wstride, rows, width,
           combiner, OUT(y)))
TF_KERNEL(scatter_w, scatter_w, tf_scatter_weighted, void,
          (const float *dy, int64_t vocab, int64_t dim, const int64_t *ids,
           int64_t stride, const float *w, int64_t wstride, int64_t rows,
           int64_t width, int combiner, float *dtable),
          (dy, vocab, dim, ids, stride, w, wstride, rows, width, combiner,
           dtable),
          (dy, ids, w, dtable),
          (IN(dy), vocab, dim, IDS(ids), stride, IN(w), wstride, rows, width,
           combiner, OUT(dtable)))
TF_KERNEL(fill, fill, tf_fill, void, (float *y, size_t n, float v), (y, n, v),
          (y), (OUT(y), n, v))
TF_KERNEL(im2col, im2col, tf_im2col, void,
          (const float *x, int64_t rows, const struct tf_conv *g, float *col),
          (x, rows, g, col), (x, col), (IN(x), rows, g, OUT(col)))
TF_KERNEL(col2im, col2im, tf_col2im, void,
          (const float *col, int64_t rows, const struct tf_conv *g, float *dx),
          (col, rows, g, dx), (col, dx), (IN(col), rows, g, OUT(dx)))
TF_KERNEL(pool, pool, tf_pool, void,
          (const float *x, int64_t rows, const struct tf_conv *g, int max,
           float *y),
          (x, rows, g, max, y), (x, y), (IN(x), rows, g, max, OUT(y)))
TF_KERNEL(pool_grad, pool_grad, tf_pool_grad, void,
          (const float *x, const float *dy, int64_t rows,
           const struct tf_conv *g, int max, float *dx),
          (x, dy, rows, g, max, dx), (x, dy, dx),
          (IN(x), IN(dy), rows, g, max, OUT(dx)))
TF_KERNEL(lstm_cell, lstm_cell, tf_lstm_cell, void,
          (const float *g, const float *c_prev, float *act, float *c, float *h,
           int64_t rows, int64_t units),
          (g, c_prev, act, c, h, rows, units), (g, c_prev, act, c, h),
          (IN(g), IN(c_prev), OUT(act), OUT(c), OUT(h), rows, units))
TF_KERNEL(lstm_cell_grad, lstm_cell_grad, tf_lstm_cell_grad, void,
          (const float *act, const float *c_prev, const float *c,
           const float *dh, float *dc, float *dg, int64_t rows, int64_t units),
          (act, c_prev, c, dh, dc, dg, rows, units),
          (act, c_prev, c, dh, dc, dg),
          (IN(act), IN(c_prev), IN(c), IN(dh), OUT(dc), OUT(dg), rows, units))
TF_KERNEL(gru_cell, gru_cell, tf_gru_cell, void,
          (const float *gx, const float *gh, const float *h_prev, float *act,
           float *h, int64_t rows, int64_t units),
          (gx, gh, h_prev, act, h, rows, units), (gx, gh, h_prev, act, h),
          (IN(gx), IN(gh), IN(h_prev), OUT(act), OUT(h), rows, units))
TF_KERNEL(gru_cell_grad, gru_cell_grad, tf_gru_cell_grad, void,
          (const float *act, const float *gh, const float *h_prev,
           const float *dh, float *dgx, float *dgh, float *dh_prev,
           int64_t rows, int64_t units),
          (act, gh, h_prev, dh, dgx, dgh, dh_prev, rows, units),
          (act, gh, h_prev, dh, dgx, dgh, dh_prev),
          (IN(act), IN(gh), IN(h_prev), IN(dh), OUT(dgx), OUT(dgh),
           OUT(dh_prev), rows, units))
TF_KERNEL(gru_gates, gru_gates, tf_gru_gates, void,
          (const float *gx, const float *gzr, const float *h_prev, float *act,
           float *rh, int64_t rows, int64_t units),
          (gx, gzr, h_prev, act, rh, rows, units), (gx, gzr, h_prev, act, rh),
          (IN(gx), IN(gzr), IN(h_prev), OUT(act), OUT(rh), rows, units))
TF_KERNEL(gru_new, gru_new, tf_gru_new, void,
          (const float *gx, const float *gn, const float *h_prev, float *act,
           float *h, int64_t rows, int64_t units),
          (gx, gn, h_prev, act, h, rows, units), (gx, gn, h_prev, act, h),
          (IN(gx), IN(gn), IN(h_prev), OUT(act), OUT(h), rows, units))
TF_KERNEL(gru_new_grad, gru_new_grad, tf_gru_new_grad, void,
          (const float *act, const float *h_prev, const float *dh, float *dgx,
           float *dzr, float *dn, float *dh_prev, int64_t rows, int64_t units),
          (act, h_prev, dh, dgx, dzr, dn, dh_prev, rows, units),
          (act, h_prev, dh, dgx, dzr, dn, dh_prev),
          (IN(act), IN(h_prev), IN(dh), OUT(dgx), OUT(dzr), OUT(dn),
           OUT(dh_prev), rows, units))
TF_KERNEL(gru_gates_grad, gru_gates_grad, tf_gru_gates_grad, void,
          (const float *act, const float *h_prev, const float *drh, float *dgx,
           float *dzr, float *dh_prev, int64_t rows, int64_t units),
          (act, h_prev, drh, dgx, dzr, dh_prev, rows, units),
          (act, h_prev, drh, dgx, dzr, dh_prev),
          (IN(act), IN(h_prev), IN(drh), OUT(dgx), OUT(dzr), OUT(dh_prev), rows,
           units))
TF_KERNEL(mask_steps, mask_steps, tf_mask_steps, void,
          (const int64_t *len, int64_t lstride, int64_t step, const float *src,
           int64_t sstride, float *dst, int64_t dstride, int64_t rows,
           int64_t cols, int zero),
          (len, lstride, step, src, sstride, dst, dstride, rows, cols, zero),
          (len, src, dst),
          (IDS(len), lstride, step, IN(src), sstride, OUT(dst), dstride, rows,
           cols, zero))
TF_KERNEL(reverse_steps, reverse_steps, tf_reverse_steps, void,
          (const int64_t *len, int64_t lstride, const float *x, float *y,
           int64_t rows, int64_t steps, int64_t width),
          (len, lstride, x, y, rows, steps, width), (len, x, y),
          (IDS(len), lstride, IN(x), OUT(y), rows, steps, width))
