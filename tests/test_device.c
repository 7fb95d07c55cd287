/* test_device.c - the device API on the host (@@CUDA): names, parsing, what a build without
   LTRAIN_CUDA answers, and the calls that are no-ops on LT_CPU.  The kernels themselves are
   tested on a GPU by tests/test_cuda.c (make cuda; bench/cuda_check.sh).  #included by test_main.c. */

static void test_device_api(void) {
    lt_ctx *ctx;
    lt_device d = LT_CUDA;
    lt_tensor *p, *y;
    float buf[4], vals[4] = {1, -2, 3, 0.5f};
    int64_t four = 4;
    if (!t_want("device")) return;
    t_check(!strcmp(lt_device_name(LT_CPU), "cpu") && !strcmp(lt_device_name(LT_CUDA), "cuda") &&
            !strcmp(lt_device_name((lt_device)7), "unknown device"), "device/names", "");
    t_check(lt_device_parse("cpu", &d) && d == LT_CPU && lt_device_parse("cuda", &d) && d == LT_CUDA &&
            lt_device_parse("gpu", &d) && d == LT_CUDA && !lt_device_parse("tpu", &d) && !lt_device_parse(NULL, &d),
            "device/parse", "");
    ctx = lt_ctx_create(1);
    t_check(lt_get_device(ctx) == LT_CPU && lt_get_device(NULL) == LT_CPU, "device/default-cpu", "");
    t_check(lt_set_device(ctx, LT_CPU) == LT_OK && !lt_failed(ctx), "device/cpu-is-ok", "%s", lt_error(ctx));
#ifndef LTRAIN_CUDA
    t_check(lt_cuda_available() == 0 && !strcmp(lt_device_describe(ctx), "cpu") && lt_device_arena_bytes(ctx) == 0,
            "device/no-cuda-build", "");
    /* asking for the GPU in a CPU build: a sentence that says why and how, nothing changes */
    t_check(lt_set_device(ctx, LT_CUDA) == LT_ERR_ARG && strstr(lt_error(ctx), "cuda") &&
            strstr(lt_error(ctx), "no CUDA backend") && strstr(lt_error(ctx), "LTRAIN_CUDA") && lt_get_device(ctx) == LT_CPU,
            "device/cuda-in-cpu-build-refused", "got: %s", lt_error(ctx));
    lt_clear_error(ctx);
#endif
    t_check(lt_set_device(ctx, (lt_device)5) == LT_ERR_ARG && strstr(lt_error(ctx), "not an lt_device"),
            "device/bad-value", "got: %s", lt_error(ctx));
    lt_clear_error(ctx);
    t_check(lt_set_device(NULL, LT_CPU) == LT_ERR_ARG, "device/null-ctx", "");
    /* on LT_CPU the sync calls change nothing and lt_tensor_read is a copy */
    p = lt_param(ctx, "p", 1, &four);
    memcpy(p->data, vals, sizeof vals);
    y = lt_scale(ctx, p, 2.0f);
    t_check(lt_sync_params(ctx) == LT_OK && lt_device_synchronize(ctx) == LT_OK, "device/sync-noop", "");
    lt_params_changed(ctx);
    lt_set_tf32(ctx, 1);
    t_check(lt_tensor_read(ctx, y, 0, buf) == LT_OK && buf[0] == 2.0f && buf[1] == -4.0f && buf[3] == 1.0f,
            "device/tensor-read", "%g %g", (double)buf[0], (double)buf[1]);
    lt_backward(ctx, lt_sum(ctx, y));
    t_check(lt_tensor_read(ctx, p, 1, buf) == LT_OK && buf[0] == 2.0f && buf[2] == 2.0f, "device/tensor-read-grad", "");
    t_check(lt_tensor_read(ctx, y, 0, NULL) == LT_ERR_ARG && strstr(lt_error(ctx), "lt_tensor_read"),
            "device/tensor-read-null-out", "got: %s", lt_error(ctx));
    lt_clear_error(ctx);
    t_check(lt_tensor_read(ctx, lt_scale(ctx, p, 1.0f), 1, buf) == LT_ERR_ARG && strstr(lt_error(ctx), "no gradient"),
            "device/tensor-read-no-grad", "got: %s", lt_error(ctx));
    lt_ctx_destroy(ctx);
}

static void test_device_all(void) { test_device_api(); }
