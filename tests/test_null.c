/* test_null.c - every public function called with NULL for its context or object (and NULL or empty
   for its other pointers): each must answer as its neighbours do (an error status, NULL, 0, NaN or
   nothing), never crash.  One row per function; null/coverage reads ltrain.h's declarations and
   fails when a public function has no row here, so a new one is tried the day it is added. */

#include <ctype.h>

static const char *tn_seen[400];
static int tn_n;

/* A row: the function's name, then an expression that calls it with NULLs and is true when the
   answer is the expected one (a crash fails the suite). */
#define TN(fn, expr)                                                                                   \
    do {                                                                                               \
        int tn_ok_;                                                                                    \
        if (tn_n < (int)(sizeof tn_seen / sizeof tn_seen[0])) tn_seen[tn_n++] = #fn;                   \
        tn_ok_ = (expr);                                                                               \
        t_check(tn_ok_, "null/" #fn, "the answer to NULL is not an error, NULL, 0 or nothing");        \
    } while (0)
/* a call whose answer carries no status (void, or a value with no error form) */
#define TN_VOID(fn, call) TN(fn, ((call), 1))

static lt_tensor *tn_step(lt_ctx *ctx, void *user) { (void)ctx; (void)user; return NULL; }

/* Functions that are not called: they end the process by design. */
static const char *const tn_exempt[] = {"lt_dist_abort"};

static void test_null_calls(void) {
    lt_paramset none = {NULL, 0};
    lt_rng *rng = NULL;
    lt_scaler sc = lt_scaler_defaults();
    size_t sz = 7;
    void *buf = (void *)&sz;
    int64_t e = 5, ix = 5;
    char err[64];
    lt_len_schedule ls;
    lt_device dev = LT_CPU;
    lt_decay dec;
    lt_scaler_state sst;
    int32_t rk = 5;
    int ri = 5;
    /* @@API: context, errors, threads */
    TN_VOID(lt_ctx_create, lt_ctx_destroy(lt_ctx_create(0)));
    TN_VOID(lt_ctx_destroy, lt_ctx_destroy(NULL));
    TN(lt_failed, lt_failed(NULL) != 0);
    TN(lt_status_of, lt_status_of(NULL) == LT_ERR_ARG);
    TN(lt_error, lt_error(NULL) != NULL);
    TN(lt_status_name, lt_status_name((lt_status)-1) != NULL);
    TN_VOID(lt_clear_error, lt_clear_error(NULL));
    TN(lt_set_error, lt_set_error(NULL, LT_ERR_ARG, "x") == LT_ERR_ARG);
    TN_VOID(lt_set_threads, lt_set_threads(0));
    TN(lt_get_threads, lt_get_threads() >= 1);
    TN_VOID(lt_set_training, lt_set_training(NULL, 1));
    TN_VOID(lt_set_grad_enabled, lt_set_grad_enabled(NULL, 1));
    TN(lt_scope, lt_scope(NULL, "x") == NULL);
    TN_VOID(lt_reset, lt_reset(NULL));
    TN(lt_arena_used, lt_arena_used(NULL) == 0);
    TN(lt_arena_peak, lt_arena_peak(NULL) == 0);
    /* devices */
    TN(lt_set_device, lt_set_device(NULL, LT_CPU) != LT_OK);
    TN(lt_get_device, lt_get_device(NULL) == LT_CPU);
    TN(lt_device_name, lt_device_name((lt_device)-1) != NULL);
    TN(lt_device_parse, lt_device_parse(NULL, &dev) == 0 && lt_device_parse("cpu", NULL) == 0);
    TN_VOID(lt_cuda_available, lt_cuda_available());
    TN(lt_device_describe, lt_device_describe(NULL) != NULL);
    TN(lt_tensor_read, lt_tensor_read(NULL, NULL, 0, NULL) != LT_OK);
    TN(lt_sync_params, lt_sync_params(NULL) != LT_OK);
    TN_VOID(lt_params_changed, lt_params_changed(NULL));
    TN_VOID(lt_set_tf32, lt_set_tf32(NULL, 1));
    TN(lt_device_synchronize, lt_device_synchronize(NULL) != LT_OK);
    TN(lt_device_arena_bytes, lt_device_arena_bytes(NULL) == 0);
    /* RNG and sizes */
    TN_VOID(lt_rng_seed, lt_rng_seed(NULL, 1));
    TN(lt_rng_u64, lt_rng_u64(NULL) == 0);
    TN(lt_rng_uniform, lt_rng_uniform(NULL) == 0.0);
    TN(lt_rng_normal, lt_rng_normal(NULL) == 0.0);
    TN(lt_ctx_rng, lt_ctx_rng(NULL) == NULL);
    TN(lt_mul_size, lt_mul_size(2, 3, NULL) == 0);
    TN(lt_add_size, lt_add_size(2, 3, NULL) == 0);
    /* tensors and parameters */
    TN(lt_tensor_new, lt_tensor_new(NULL, 1, NULL) == NULL);
    TN(lt_tensor_from, lt_tensor_from(NULL, NULL, 1, NULL) == NULL);
    TN(lt_param, lt_param(NULL, NULL, 1, NULL) == NULL);
    TN(lt_ctx_params, lt_ctx_params(NULL).n == 0 && lt_ctx_params(NULL).p == NULL);
    TN(lt_find_param, lt_find_param(NULL, NULL) == NULL);
    TN(lt_params_pack, lt_params_pack(NULL) != LT_OK);
    TN(lt_params_count, lt_params_count(NULL) == 0);
    TN(lt_params_grad_span, lt_params_grad_span(NULL, &sz) == NULL && sz == 0 && lt_params_grad_span(NULL, NULL) == NULL);
    TN_VOID(lt_init_normal, lt_init_normal(NULL, NULL, 0, 1));
    TN_VOID(lt_init_uniform, lt_init_uniform(NULL, NULL, 0, 1));
    TN_VOID(lt_fill, lt_fill(NULL, 1));
    TN(lt_item, isnan(lt_item(NULL)));
    TN(lt_shape_str, lt_shape_str(NULL, err, sizeof err) == err && lt_shape_str(NULL, NULL, 0) == NULL);
    /* ops */
    TN(lt_reshape, lt_reshape(NULL, NULL, 1, NULL) == NULL);
    TN(lt_add, lt_add(NULL, NULL, NULL) == NULL);
    TN(lt_sub, lt_sub(NULL, NULL, NULL) == NULL);
    TN(lt_mul, lt_mul(NULL, NULL, NULL) == NULL);
    TN(lt_scale, lt_scale(NULL, NULL, 2) == NULL);
    TN(lt_sum, lt_sum(NULL, NULL) == NULL);
    TN(lt_mean, lt_mean(NULL, NULL) == NULL);
    TN(lt_matmul, lt_matmul(NULL, NULL, NULL, 0) == NULL);
    TN(lt_linear, lt_linear(NULL, NULL, NULL, NULL) == NULL);
    TN(lt_conv1d, lt_conv1d(NULL, NULL, NULL, NULL) == NULL);
    TN(lt_gelu, lt_gelu(NULL, NULL) == NULL);
    TN(lt_gelu_erf, lt_gelu_erf(NULL, NULL) == NULL);
    TN(lt_relu, lt_relu(NULL, NULL) == NULL);
    TN(lt_tanh, lt_tanh(NULL, NULL) == NULL);
    TN(lt_sigmoid, lt_sigmoid(NULL, NULL) == NULL);
    TN(lt_softmax, lt_softmax(NULL, NULL) == NULL);
    TN(lt_log_softmax, lt_log_softmax(NULL, NULL) == NULL);
    TN(lt_layernorm, lt_layernorm(NULL, NULL, NULL, NULL, 1e-5f) == NULL);
    TN(lt_embedding, lt_embedding(NULL, NULL, NULL, 1, 1) == NULL);
    TN(lt_dropout, lt_dropout(NULL, NULL, 0.5f) == NULL);
    TN(lt_transpose, lt_transpose(NULL, NULL, 0, 1) == NULL);
    TN(lt_attention, lt_attention(NULL, NULL, 1, NULL) == NULL);
    TN(lt_rmsnorm, lt_rmsnorm(NULL, NULL, NULL, 1e-5f) == NULL);
    TN(lt_rope, lt_rope(NULL, NULL, 1, 10000, 0) == NULL);
    TN(lt_silu, lt_silu(NULL, NULL) == NULL);
    TN(lt_swiglu, lt_swiglu(NULL, NULL, NULL) == NULL);
    TN(lt_attention_gqa, lt_attention_gqa(NULL, NULL, NULL, NULL, 1, 1, NULL) == NULL);
    TN(lt_cross_entropy, lt_cross_entropy(NULL, NULL, NULL) == NULL);
    TN(lt_cross_entropy_sum, lt_cross_entropy_sum(NULL, NULL, NULL, 1) == NULL);
    TN(lt_linear_cross_entropy, lt_linear_cross_entropy(NULL, NULL, NULL, NULL) == NULL);
    TN(lt_linear_cross_entropy_sum, lt_linear_cross_entropy_sum(NULL, NULL, NULL, NULL, 1) == NULL);
    TN(lt_mse_loss, lt_mse_loss(NULL, NULL, NULL) == NULL);
    TN(lt_count_targets, lt_count_targets(NULL, 4) == 0);
    /* the tape */
    TN(lt_backward, lt_backward(NULL, NULL) != LT_OK);
    TN_VOID(lt_retain_grad, lt_retain_grad(NULL));
    TN(lt_backward_scaled, lt_backward_scaled(NULL, NULL, 1) != LT_OK);
    TN_VOID(lt_zero_grad, lt_zero_grad(NULL));
    TN_VOID(lt_zero_grad_lazy, lt_zero_grad_lazy(NULL));
    TN(lt_tape_length, lt_tape_length(NULL) == 0);
    TN_VOID(lt_set_profiling, lt_set_profiling(NULL, 1));
    TN_VOID(lt_profile_print, lt_profile_print(NULL, NULL));
    TN(lt_gradcheck, !(lt_gradcheck(NULL, NULL, NULL, 1, NULL, 1e-3) < 1e300));
    TN(lt_recompute_begin, lt_recompute_begin(NULL) != LT_OK);
    TN(lt_recompute_end, lt_recompute_end(NULL, NULL) == NULL);
    /* compiled steps */
    TN(lt_compile, lt_compile(NULL, tn_step, NULL) == NULL);
    TN(lt_plan_run, lt_plan_run(NULL, NULL) != LT_OK);
    TN(lt_plan_run_scaled, lt_plan_run_scaled(NULL, 1, NULL) != LT_OK);
    TN_VOID(lt_plan_is_eager, lt_plan_is_eager(NULL));
    TN(lt_plan_note, lt_plan_note(NULL) != NULL);
    TN(lt_plan_bytes, lt_plan_bytes(NULL) == 0);
    TN(lt_plan_naive_bytes, lt_plan_naive_bytes(NULL) == 0);
    TN(lt_plan_saved_bytes, lt_plan_saved_bytes(NULL) == 0);
    TN(lt_set_memory_budget, lt_set_memory_budget(NULL, "1G") != LT_OK && lt_set_memory_budget(NULL, NULL) != LT_OK);
    TN(lt_plan_budget, lt_plan_budget(NULL) == 0);
    TN(lt_plan_recomputed_bytes, lt_plan_recomputed_bytes(NULL) == 0);
    TN(lt_plan_recomputed_flops, lt_plan_recomputed_flops(NULL) == 0);
    TN_VOID(lt_plan_destroy, lt_plan_destroy(NULL));
    TN(lt_plan_cache_create, lt_plan_cache_create(NULL, 4) == NULL);
    TN(lt_plan_cache_get, lt_plan_cache_get(NULL, 1, tn_step, NULL) == NULL);
    TN(lt_plan_cache_size, lt_plan_cache_size(NULL) == 0);
    TN_VOID(lt_plan_cache_destroy, lt_plan_cache_destroy(NULL));
    /* matmul kernels */
    TN_VOID(lt_sgemm, lt_sgemm(0, 0, 0, 0, 0, 1, NULL, 1, NULL, 1, 0, NULL, 1));
    TN(lt_kernel_name, lt_kernel_name() != NULL);
    TN(lt_kernel_name_for, lt_kernel_name_for((lt_dtype)-1) != NULL);
    /* the GPT */
    TN_VOID(lt_gpt2_config, lt_gpt2_config(0, 0, 0, 0, 0));
    TN_VOID(lt_llama_config, lt_llama_config(0, 0, 0, 0, 0, 0, 0));
    TN(lt_gpt_create, lt_gpt_create(NULL, NULL) == NULL);
    TN_VOID(lt_gpt_destroy, lt_gpt_destroy(NULL));
    TN(lt_gpt_cfg, lt_gpt_cfg(NULL) == NULL);
    TN(lt_gpt_params, lt_gpt_params(NULL).n == 0);
    TN(lt_gpt_num_params, lt_gpt_num_params(NULL) == 0);
    TN(lt_gpt_set_recompute, lt_gpt_set_recompute(NULL, 1) != LT_OK);
    TN(lt_gpt_set_fused_head, lt_gpt_set_fused_head(NULL, 1) != LT_OK);
    TN(lt_gpt_forward, lt_gpt_forward(NULL, NULL, 1, 1, NULL) == NULL);
    TN(lt_gpt_loss, lt_gpt_loss(NULL, NULL, NULL, 1, 1) == NULL);
    TN(lt_gpt_generate, lt_gpt_generate(NULL, NULL, 0, 1, 1, 0, NULL, NULL) <= 0);
    TN(lt_gpt_loss_ex, lt_gpt_loss_ex(NULL, NULL, NULL, 1, 1, NULL, 1) == NULL);
    /* optimizers */
    TN_VOID(lt_adamw_defaults, lt_adamw_defaults());
    TN_VOID(lt_sgd_defaults, lt_sgd_defaults());
    TN(lt_adamw_create, lt_adamw_create(NULL, none, lt_adamw_defaults()) == NULL);
    TN(lt_sgd_create, lt_sgd_create(NULL, none, lt_sgd_defaults()) == NULL);
    TN(lt_optim_step, lt_optim_step(NULL, 1e-3) != LT_OK);
    TN_VOID(lt_optim_destroy, lt_optim_destroy(NULL));
    TN(lt_optim_steps, lt_optim_steps(NULL) == 0);
    TN_VOID(lt_optim_set_steps, lt_optim_set_steps(NULL, 3));
    TN(lt_optim_name, lt_optim_name(NULL) != NULL);
    TN(lt_optim_num_states, lt_optim_num_states(NULL) == 0);
    TN(lt_optim_state_name, lt_optim_state_name(NULL, 0) == NULL);
    TN(lt_optim_state, lt_optim_state(NULL, 0, 0) == NULL);
    TN(lt_optim_params, lt_optim_params(NULL).n == 0);
    TN(lt_optim_state_buf, lt_optim_state_buf(NULL, 0, 0, &e) == NULL && e == 0);
    TN(lt_optim_state_bytes, lt_optim_state_bytes(NULL) == 0);
    TN_VOID(lt_lion_defaults, lt_lion_defaults());
    TN(lt_lion_create, lt_lion_create(NULL, none, lt_lion_defaults()) == NULL);
    TN_VOID(lt_ademamix_defaults, lt_ademamix_defaults());
    TN(lt_ademamix_create, lt_ademamix_create(NULL, none, lt_ademamix_defaults()) == NULL);
    TN(lt_ademamix_alpha, isnan(lt_ademamix_alpha(NULL, 1)));
    TN(lt_ademamix_beta3, isnan(lt_ademamix_beta3(NULL, 1)));
    TN_VOID(lt_muon_defaults, lt_muon_defaults());
    TN(lt_muon_create, lt_muon_create(NULL, none, lt_muon_defaults()) == NULL);
    TN(lt_muon_is_hidden, lt_muon_is_hidden(NULL, NULL) == 0);
    TN(lt_muon_uses_muon, lt_muon_uses_muon(NULL, 0) == 0);
    TN_VOID(lt_soap_defaults, lt_soap_defaults());
    TN(lt_soap_create, lt_soap_create(NULL, none, lt_soap_defaults()) == NULL);
    /* schedules, clipping */
    TN(lt_schedule_lr, isnan(lt_schedule_lr(NULL, 1)));
    TN(lt_decay_name, lt_decay_name((lt_decay)-1) != NULL);
    TN(lt_decay_parse, lt_decay_parse(NULL, &dec) == 0 && lt_decay_parse("cosine", NULL) == 0);
    TN_VOID(lt_linear_lr, lt_lrs_destroy(lt_linear_lr(1, 1, 1, 0)));
    TN_VOID(lt_cosine_annealing_lr, lt_lrs_destroy(lt_cosine_annealing_lr(1, 0, 0)));
    TN(lt_sequential_lr, lt_sequential_lr(NULL, 2, NULL) == NULL);
    TN(lt_lrs_get, isnan(lt_lrs_get(NULL)));
    TN_VOID(lt_lrs_step, lt_lrs_step(NULL));
    TN_VOID(lt_lrs_destroy, lt_lrs_destroy(NULL));
    TN(lt_clip_grad_norm, !(lt_clip_grad_norm(NULL, none, 1) > 0));
    TN(lt_grad_norm, !(lt_grad_norm(NULL, none) > 0));
    TN_VOID(lt_clip_grad_value, lt_clip_grad_value(NULL, none, 1));
    /* 16-bit numbers, the loss scaler, precision */
    TN_VOID(lt_f32_to_bf16, lt_f32_to_bf16(1));
    TN_VOID(lt_bf16_to_f32, lt_bf16_to_f32(1));
    TN_VOID(lt_f32_to_f16, lt_f32_to_f16(1));
    TN_VOID(lt_f16_to_f32, lt_f16_to_f32(1));
    TN_VOID(lt_f32_to_bf16_array, lt_f32_to_bf16_array(NULL, NULL, 0));
    TN_VOID(lt_bf16_to_f32_array, lt_bf16_to_f32_array(NULL, NULL, 0));
    TN_VOID(lt_f32_to_f16_array, lt_f32_to_f16_array(NULL, NULL, 0));
    TN_VOID(lt_f16_to_f32_array, lt_f16_to_f32_array(NULL, NULL, 0));
    TN(lt_amp_kernel_name, lt_amp_kernel_name() != NULL);
    TN_VOID(lt_f32_to_bf16_stochastic, lt_f32_to_bf16_stochastic(1, rng));
    TN_VOID(lt_f32_to_bf16_stochastic_array, lt_f32_to_bf16_stochastic_array(NULL, NULL, 0, rng));
    TN_VOID(lt_scaler_defaults, lt_scaler_defaults());
    TN(lt_scaler_scale_loss, lt_scaler_scale_loss(NULL, NULL, NULL) == NULL && lt_scaler_scale_loss(NULL, &sc, NULL) == NULL);
    TN(lt_scaler_unscale, lt_scaler_unscale(NULL, NULL, none) != LT_OK);
    TN(lt_scaler_step, lt_scaler_step(NULL, NULL, 1) != LT_OK && lt_scaler_step(&sc, NULL, 1) != LT_OK);
    TN(lt_scaler_update, lt_scaler_update(NULL) != LT_OK);
    TN(lt_scaler_get_scale, lt_scaler_get_scale(NULL) == 1.0);
    TN(lt_scaler_found_inf, lt_scaler_found_inf(NULL) == 0);
    TN(lt_scaler_skipped, lt_scaler_skipped(NULL) == 0);
    TN_VOID(lt_scaler_get_state, sst = lt_scaler_get_state(NULL));
    TN(lt_scaler_set_state, lt_scaler_set_state(NULL, NULL, NULL) != LT_OK && lt_scaler_set_state(NULL, &sc, &sst) != LT_OK);
    TN(lt_set_precision, lt_set_precision(NULL, LT_BF16) != LT_OK);
    TN(lt_get_precision, lt_get_precision(NULL) == LT_F32);
    TN(lt_precision_name, lt_precision_name((lt_dtype)-1) != NULL);
    TN_VOID(lt_round_to_precision, lt_round_to_precision(LT_BF16, NULL, NULL, 0));
    /* data */
    TN(lt_loader_open, lt_loader_open(NULL, NULL, 1, 1, 0) == NULL);
    TN(lt_loader_open_as, lt_loader_open_as(NULL, NULL, LT_DATA_AUTO, 1, 1, 0) == NULL);
    TN(lt_loader_from_tokens, lt_loader_from_tokens(NULL, NULL, 0, 1, 1) == NULL);
    TN(lt_loader_open_tok, lt_loader_open_tok(NULL, NULL, NULL, 0, 1, 1) == NULL);
    TN_VOID(lt_loader_destroy, lt_loader_destroy(NULL));
    TN(lt_loader_next, lt_loader_next(NULL, NULL, NULL) != LT_OK);
    TN_VOID(lt_loader_shuffle, lt_loader_shuffle(NULL, 1));
    TN(lt_loader_num_tokens, lt_loader_num_tokens(NULL) == 0);
    TN(lt_loader_read, lt_loader_read(NULL, 0, 1, NULL) != LT_OK && lt_loader_read(NULL, 0, 0, NULL) != LT_OK);
    TN(lt_loader_tokens, lt_loader_tokens(NULL) == NULL);
    TN(lt_loader_is_shard, lt_loader_is_shard(NULL) == 0);
    TN(lt_loader_token_bytes, lt_loader_token_bytes(NULL) == 0);
    TN(lt_loader_check_vocab, lt_loader_check_vocab(NULL, 1) != LT_OK);
    TN(lt_loader_get_pos, (lt_loader_get_pos(NULL, &e, &ix), lt_loader_get_pos(NULL, NULL, NULL), e == 0 && ix == 0));
    TN(lt_loader_set_pos, lt_loader_set_pos(NULL, 0, 0) != LT_OK);
    TN(lt_shard_parse, lt_shard_parse(NULL, NULL, 0, NULL, 0, NULL, NULL) != LT_OK);
    TN(lt_read_file, lt_read_file(NULL, NULL, &buf, &sz) != LT_OK && buf == NULL && sz == 0);
    TN_VOID(lt_free, lt_free(NULL));
    /* safetensors */
    TN(lt_st_open, lt_st_open(NULL, NULL) == NULL);
    TN(lt_st_parse, lt_st_parse(NULL, NULL, 0, NULL) == NULL);
    TN_VOID(lt_st_close, lt_st_close(NULL));
    TN(lt_st_count, lt_st_count(NULL) == 0);
    TN(lt_st_find, lt_st_find(NULL, NULL) == -1);
    TN(lt_st_name, lt_st_name(NULL, 0) == NULL);
    TN(lt_st_dtype, lt_st_dtype(NULL, 0) == NULL);
    TN(lt_st_shape, lt_st_shape(NULL, 0, NULL) == -1);
    TN(lt_st_data, lt_st_data(NULL, 0, &sz) == NULL && lt_st_data(NULL, 0, NULL) == NULL);
    TN(lt_st_read_f32, lt_st_read_f32(NULL, 0, NULL, 0) != LT_OK);
    TN(lt_st_meta, lt_st_meta(NULL, NULL) == NULL);
    TN(lt_st_meta_key, lt_st_meta_key(NULL, 0) == NULL);
    TN(lt_st_writer_create, lt_st_writer_create(NULL) == NULL);
    TN(lt_st_add, lt_st_add(NULL, NULL, NULL, 1, NULL, NULL) != LT_OK);
    TN(lt_st_add_meta, lt_st_add_meta(NULL, NULL, NULL) != LT_OK);
    TN(lt_utf8_escape, lt_utf8_escape(NULL, 8, "x") == 0 && lt_utf8_escape(err, sizeof err, NULL) == 0 && err[0] == 0);
    TN(lt_st_save, lt_st_save(NULL, NULL) != LT_OK);
    TN(lt_dest_check, lt_dest_check(NULL, NULL, LT_DEST_REPLACE) != LT_OK && lt_dest_check(NULL, NULL, LT_DEST_STREAM) != LT_OK);
    TN_VOID(lt_st_writer_destroy, lt_st_writer_destroy(NULL));
    /* variable-length sequences */
    TN_VOID(lt_seq_defaults, lt_seq_defaults());
    TN(lt_seq_open, lt_seq_open(NULL, NULL, NULL, 0) == NULL);
    TN(lt_seq_open_as, lt_seq_open_as(NULL, NULL, LT_DATA_AUTO, NULL, 0) == NULL);
    TN(lt_seq_from_loader, lt_seq_from_loader(NULL, NULL, NULL) == NULL);
    TN(lt_seq_from_text, lt_seq_from_text(NULL, NULL, 0, NULL) == NULL);
    TN(lt_seq_from_tokens, lt_seq_from_tokens(NULL, NULL, 0, NULL) == NULL);
    TN_VOID(lt_seq_destroy, lt_seq_destroy(NULL));
    TN(lt_seq_count, lt_seq_count(NULL) == 0);
    TN(lt_seq_length, lt_seq_length(NULL, 0) <= 0);
    TN(lt_seq_tokens, lt_seq_tokens(NULL, 0) == NULL);
    TN(lt_seq_batches, lt_seq_batches(NULL, 0) <= 0);
    TN(lt_seq_batch_members, lt_seq_batch_members(NULL, 0, 0, NULL) <= 0);
    TN(lt_seq_next, lt_seq_next(NULL, 0, NULL) != LT_OK);
    TN(lt_seq_get_pos, (e = ix = 5, lt_seq_get_pos(NULL, &e, &ix), lt_seq_get_pos(NULL, NULL, NULL), e == 0 && ix == 0));
    TN(lt_seq_set_pos, lt_seq_set_pos(NULL, 0, 0) != LT_OK);
    TN(lt_batch_from_rows, lt_batch_from_rows(NULL, NULL, NULL, NULL, NULL, 1, 1, 0) != LT_OK);
    TN_VOID(lt_batch_free, lt_batch_free(NULL));
    TN(lt_len_at, lt_len_at(NULL, 0) <= 0);
    TN(lt_len_parse, lt_len_parse(NULL, &ls, err, sizeof err) == 0 && lt_len_parse("64", NULL, NULL, 0) == 0);
    TN(lt_restarts, lt_restarts(1, 1, NULL, NULL, NULL, NULL) < 0);
    TN_VOID(lt_restarts_print, lt_restarts_print(NULL, 1, NULL, NULL, 0));
    /* tokenizers */
    TN(lt_tok_load_gpt2, lt_tok_load_gpt2(NULL, NULL, NULL) == NULL);
    TN(lt_tok_parse_gpt2, lt_tok_parse_gpt2(NULL, NULL, 0, NULL, 0, NULL) == NULL);
    TN(lt_tok_load_json, lt_tok_load_json(NULL, NULL) == NULL);
    TN(lt_tok_parse_json, lt_tok_parse_json(NULL, NULL, 0, NULL) == NULL);
    TN_VOID(lt_tok_free, lt_tok_free(NULL));
    TN(lt_tok_encode, lt_tok_encode(NULL, NULL, 0, 0, NULL, 0) < 0 && lt_tok_encode(NULL, "ab", 2, LT_TOK_SPECIAL, NULL, 4) < 0);
    TN(lt_tok_decode, lt_tok_decode(NULL, NULL, 0, NULL, 0) < 0 && lt_tok_decode(NULL, NULL, 2, NULL, 4) < 0);
    TN(lt_tok_vocab_size, lt_tok_vocab_size(NULL) == 0);
    TN(lt_tok_special, lt_tok_special(NULL, NULL) == -1 && lt_tok_special(NULL, "x") == -1);
    TN(lt_tok_token, (sz = 7, lt_tok_token(NULL, 0, &sz) == NULL && sz == 0 && lt_tok_token(NULL, 0, NULL) == NULL));
    TN(lt_tok_lookup, lt_tok_lookup(NULL, NULL, 0) == -1 && lt_tok_lookup(NULL, NULL, 3) == -1);
    TN(lt_tok_merge, lt_tok_merge(NULL, 0, 1, NULL) == -1 && lt_tok_merge(NULL, 0, 1, &rk) == -1);
    TN(lt_tok_num_merges, lt_tok_num_merges(NULL) == 0);
    TN_VOID(lt_tok_pattern, lt_tok_pattern(NULL));
    TN(lt_tok_memory, lt_tok_memory(NULL) == 0);
    TN(lt_pretok_next, lt_pretok_next(LT_PRETOK_GPT2, NULL, 4) == 0 && lt_pretok_next((lt_pretok)0, "ab", 2) == 0);
    TN_VOID(lt_tok_byte_char, lt_tok_byte_char(-1));
    TN(lt_tok_char_byte, lt_tok_char_byte(0xffffffffu) == -1);
    TN(lt_tok_nfc, lt_tok_nfc(NULL, NULL, 0, NULL, 0) == 0 && lt_tok_nfc(NULL, NULL, 2, NULL, 4) < 0);
    TN_VOID(lt_bpe_defaults, lt_bpe_defaults());
    TN(lt_bpe_train, lt_bpe_train(NULL, NULL, 0, NULL) == NULL && lt_bpe_train(NULL, NULL, 4, NULL) == NULL);
    TN_VOID(lt_bpe_free, lt_bpe_free(NULL));
    TN(lt_bpe_vocab_size, lt_bpe_vocab_size(NULL) == 0);
    TN(lt_bpe_n_special, lt_bpe_n_special(NULL) == 0);
    TN(lt_bpe_n_merges, lt_bpe_n_merges(NULL) == 0);
    TN(lt_bpe_merge, lt_bpe_merge(NULL, 0, NULL, NULL) == -1 && lt_bpe_merge(NULL, 0, &ri, &ri) == -1);
    TN(lt_bpe_token, lt_bpe_token(NULL, 0, &sz) == NULL && lt_bpe_token(NULL, 0, NULL) == NULL);
    TN(lt_bpe_save_json, lt_bpe_save_json(NULL, NULL, NULL) != LT_OK);
    TN(lt_bpe_save_gpt2, lt_bpe_save_gpt2(NULL, NULL, NULL, NULL) != LT_OK);
    /* checkpoints */
    TN(lt_gpt_save, lt_gpt_save(NULL, NULL) != LT_OK);
    TN(lt_gpt_load, lt_gpt_load(NULL, NULL, 1) == NULL);
    TN(lt_gpt_load_weights, lt_gpt_load_weights(NULL, NULL) != LT_OK);
    TN(lt_checkpoint_save, lt_checkpoint_save(NULL, NULL, NULL, NULL, NULL) != LT_OK);
    TN(lt_checkpoint_load, lt_checkpoint_load(NULL, NULL, NULL, NULL) != LT_OK);
    /* plots */
    TN_VOID(lt_plot_create, lt_plot_destroy(lt_plot_create(NULL, NULL, NULL)));
    TN_VOID(lt_plot_destroy, lt_plot_destroy(NULL));
    TN(lt_plot_panel, lt_plot_panel(NULL, NULL, NULL, NULL) != LT_OK);
    TN(lt_plot_series, lt_plot_series(NULL, NULL, NULL, NULL, 0) < 0);
    TN(lt_plot_append, lt_plot_append(NULL, 0, 0, 0) != LT_OK);
    TN_VOID(lt_plot_log_y, lt_plot_log_y(NULL, 1));
    TN_VOID(lt_plot_range, lt_plot_range(NULL, 0, 1, 0, 1));
    TN_VOID(lt_plot_size, lt_plot_size(NULL, 10, 10));
    TN(lt_plot_save, lt_plot_save(NULL, NULL) != LT_OK);
    TN(lt_plot_error, lt_plot_error(NULL) != NULL);
    /* data parallel (without MPI: one process) */
    TN_VOID(lt_dist_init, lt_dist_init(NULL, NULL));
    TN_VOID(lt_dist_finalize, (void)0);   /* (ends MPI for the whole process: not called here) */
    TN(lt_dist_rank, lt_dist_rank() >= 0);
    TN(lt_dist_world, lt_dist_world() >= 1);
    TN_VOID(lt_dist_defaults, lt_dist_defaults());
    TN(lt_dist_create, lt_dist_create(NULL, NULL) == NULL);
    TN_VOID(lt_dist_destroy, lt_dist_destroy(NULL));
    TN(lt_dist_allreduce_grads, lt_dist_allreduce_grads(NULL) != LT_OK);
    TN_VOID(lt_dist_mean, lt_dist_mean(NULL, 1));
    TN(lt_dist_barrier, lt_dist_barrier(NULL) != LT_OK);
    TN(lt_dist_broadcast_params, lt_dist_broadcast_params(NULL) != LT_OK);
    TN(lt_dist_check_sync, lt_dist_check_sync(NULL) != LT_OK);
    TN(lt_dist_loader_next, lt_dist_loader_next(NULL, NULL, NULL, NULL) != LT_OK);
    TN(lt_dist_checkpoint_save, lt_dist_checkpoint_save(NULL, NULL, NULL, NULL, NULL, NULL) != LT_OK);
    TN(lt_dist_checkpoint_load, lt_dist_checkpoint_load(NULL, NULL, NULL, NULL, NULL) != LT_OK);
    TN_VOID(lt_dist_get_stats, lt_dist_get_stats(NULL));
    TN(lt_dist_describe, lt_dist_describe(NULL) != NULL);
}

/* The same with a live context and NULL for everything else: each call sets an error (and the
   context is cleared for the next row) or is a documented no-op. */
#define TNL(fn, expr)                                                                                  \
    do {                                                                                               \
        int tn_ok_ = (expr);                                                                           \
        t_check(tn_ok_, "null/live/" #fn, "%s", lt_error(ctx));                                        \
        lt_clear_error(ctx);                                                                           \
        lt_reset(ctx);                                                                                 \
    } while (0)
static void test_null_live(void) {
    lt_ctx *ctx = lt_ctx_create(1);
    lt_paramset none = {NULL, 0};
    void *buf = NULL;
    size_t sz = 0;
    int32_t *tok = NULL;
    int64_t n = 0;
    if (!ctx) { t_skip("null/live", "out of memory"); return; }
    TNL(lt_tensor_new, lt_tensor_new(ctx, 1, NULL) == NULL && lt_failed(ctx));
    TNL(lt_tensor_from, lt_tensor_from(ctx, NULL, 1, NULL) == NULL && lt_failed(ctx));
    TNL(lt_param, lt_param(ctx, NULL, 1, NULL) == NULL && lt_failed(ctx));
    TNL(lt_find_param, lt_find_param(ctx, NULL) == NULL);
    TNL(lt_tensor_read, lt_tensor_read(ctx, NULL, 0, NULL) != LT_OK);
    TNL(lt_init_normal, (lt_init_normal(ctx, NULL, 0, 1), 1));
    TNL(lt_reshape, lt_reshape(ctx, NULL, 1, NULL) == NULL && lt_failed(ctx));
    TNL(lt_add, lt_add(ctx, NULL, NULL) == NULL && lt_failed(ctx));
    TNL(lt_matmul, lt_matmul(ctx, NULL, NULL, 0) == NULL && lt_failed(ctx));
    TNL(lt_linear, lt_linear(ctx, NULL, NULL, NULL) == NULL && lt_failed(ctx));
    TNL(lt_layernorm, lt_layernorm(ctx, NULL, NULL, NULL, 1e-5f) == NULL && lt_failed(ctx));
    TNL(lt_embedding, lt_embedding(ctx, NULL, NULL, 1, 1) == NULL && lt_failed(ctx));
    TNL(lt_attention, lt_attention(ctx, NULL, 1, NULL) == NULL && lt_failed(ctx));
    TNL(lt_rmsnorm, lt_rmsnorm(ctx, NULL, NULL, 1e-5f) == NULL && lt_failed(ctx));
    TNL(lt_rope, lt_rope(ctx, NULL, 1, 10000, 0) == NULL && lt_failed(ctx));
    TNL(lt_silu, lt_silu(ctx, NULL) == NULL && lt_failed(ctx));
    TNL(lt_swiglu, lt_swiglu(ctx, NULL, NULL) == NULL && lt_failed(ctx));
    TNL(lt_attention_gqa, lt_attention_gqa(ctx, NULL, NULL, NULL, 1, 1, NULL) == NULL && lt_failed(ctx));
    TNL(lt_cross_entropy, lt_cross_entropy(ctx, NULL, NULL) == NULL && lt_failed(ctx));
    TNL(lt_linear_cross_entropy, lt_linear_cross_entropy(ctx, NULL, NULL, NULL) == NULL && lt_failed(ctx));
    TNL(lt_mse_loss, lt_mse_loss(ctx, NULL, NULL) == NULL && lt_failed(ctx));
    TNL(lt_backward, lt_backward(ctx, NULL) != LT_OK);
    TNL(lt_recompute_end, lt_recompute_end(ctx, NULL) == NULL && lt_failed(ctx));
    TNL(lt_recompute_begin, lt_recompute_begin(ctx) == LT_OK && lt_recompute_end(ctx, NULL) == NULL && lt_failed(ctx));
    TNL(lt_profile_print, (lt_profile_print(ctx, NULL), 1));
    TNL(lt_gradcheck, isnan(lt_gradcheck(ctx, NULL, NULL, 1, NULL, 1e-3)) && lt_failed(ctx));
    TNL(lt_compile, lt_compile(ctx, NULL, NULL) == NULL);
    TNL(lt_set_memory_budget, lt_set_memory_budget(ctx, NULL) == LT_OK && !lt_failed(ctx));
    TNL(lt_gpt_create, lt_gpt_create(ctx, NULL) == NULL && lt_failed(ctx));
    TNL(lt_adamw_create, (lt_optim_destroy(lt_adamw_create(ctx, none, lt_adamw_defaults())), 1));
    TNL(lt_muon_create, (lt_optim_destroy(lt_muon_create(ctx, none, lt_muon_defaults())), 1));
    TNL(lt_soap_create, (lt_optim_destroy(lt_soap_create(ctx, none, lt_soap_defaults())), 1));
    TNL(lt_scaler_scale_loss, lt_scaler_scale_loss(ctx, NULL, NULL) == NULL);
    TNL(lt_scaler_unscale, lt_scaler_unscale(ctx, NULL, none) != LT_OK);
    TNL(lt_scaler_set_state, lt_scaler_set_state(ctx, NULL, NULL) != LT_OK);
    TNL(lt_loader_open, lt_loader_open(ctx, NULL, 1, 1, 0) == NULL && lt_failed(ctx));
    TNL(lt_loader_open_as, lt_loader_open_as(ctx, NULL, LT_DATA_AUTO, 1, 1, 0) == NULL && lt_failed(ctx));
    TNL(lt_loader_from_tokens, lt_loader_from_tokens(ctx, NULL, 8, 1, 1) == NULL && lt_failed(ctx));
    TNL(lt_loader_open_tok, lt_loader_open_tok(ctx, "x.txt", NULL, 0, 1, 1) == NULL && lt_failed(ctx));
    TNL(lt_shard_parse, lt_shard_parse(ctx, NULL, 0, NULL, 0, &tok, &n) != LT_OK && lt_shard_parse(ctx, NULL, 0, NULL, 0, NULL, NULL) != LT_OK);
    TNL(lt_read_file, lt_read_file(ctx, NULL, &buf, &sz) != LT_OK && lt_read_file(ctx, "x", NULL, NULL) != LT_OK);
    TNL(lt_st_open, lt_st_open(ctx, NULL) == NULL && lt_failed(ctx));
    TNL(lt_st_parse, lt_st_parse(ctx, NULL, 0, NULL) == NULL && lt_failed(ctx));
    TNL(lt_dest_check, lt_dest_check(ctx, NULL, LT_DEST_REPLACE) != LT_OK && lt_failed(ctx));
    TNL(lt_seq_open, lt_seq_open(ctx, NULL, NULL, 0) == NULL && lt_failed(ctx));
    TNL(lt_seq_open_as, lt_seq_open_as(ctx, NULL, LT_DATA_AUTO, NULL, 0) == NULL && lt_failed(ctx));
    TNL(lt_seq_from_loader, lt_seq_from_loader(ctx, NULL, NULL) == NULL && lt_failed(ctx));
    TNL(lt_seq_from_text, lt_seq_from_text(ctx, NULL, 0, NULL) == NULL && lt_failed(ctx));
    TNL(lt_seq_from_tokens, lt_seq_from_tokens(ctx, NULL, 0, NULL) == NULL && lt_failed(ctx));
    TNL(lt_batch_from_rows, lt_batch_from_rows(ctx, NULL, NULL, NULL, NULL, 1, 1, 0) != LT_OK);
    TNL(lt_tok_load_gpt2, lt_tok_load_gpt2(ctx, NULL, NULL) == NULL && lt_failed(ctx));
    TNL(lt_tok_parse_gpt2, lt_tok_parse_gpt2(ctx, NULL, 0, NULL, 0, NULL) == NULL && lt_failed(ctx));
    TNL(lt_tok_load_json, lt_tok_load_json(ctx, NULL) == NULL && lt_failed(ctx));
    TNL(lt_tok_parse_json, lt_tok_parse_json(ctx, NULL, 0, NULL) == NULL && lt_failed(ctx));
    TNL(lt_bpe_train, lt_bpe_train(ctx, NULL, 4, NULL) == NULL && lt_failed(ctx));
    TNL(lt_bpe_save_json, lt_bpe_save_json(ctx, NULL, NULL) != LT_OK && lt_failed(ctx));
    TNL(lt_bpe_save_gpt2, lt_bpe_save_gpt2(ctx, NULL, NULL, NULL) != LT_OK && lt_failed(ctx));
    TNL(lt_gpt_load, lt_gpt_load(ctx, NULL, 1) == NULL && lt_failed(ctx));
    TNL(lt_dist_create, (lt_dist_destroy(lt_dist_create(ctx, NULL)), 1));
    TNL(lt_plan_cache_create, (lt_plan_cache_destroy(lt_plan_cache_create(ctx, 0)), 1));
    lt_ctx_destroy(ctx);
}

/* README's MLP (examples/mlp.c) when lt_ctx_create returns NULL (out of memory): every call is a
   no-op and the loop's one lt_failed check ends it with a message. */
static int tn_mlp_body(lt_ctx *ctx) {
    int64_t s_w1[2] = {32, 1}, s_b1[1] = {32}, s_w2[2] = {1, 32}, s_b2[1] = {1}, s_x[2] = {64, 1};
    lt_tensor *w1 = lt_param(ctx, "w1", 2, s_w1), *b1 = lt_param(ctx, "b1", 1, s_b1);
    lt_tensor *w2 = lt_param(ctx, "w2", 2, s_w2), *b2 = lt_param(ctx, "b2", 1, s_b2);
    lt_sgd_config sgd = lt_sgd_defaults();
    lt_optim *opt;
    float x[64], y[64];
    int i, step;
    lt_init_normal(ctx, w1, 0, 1.0); lt_init_normal(ctx, w2, 0, 0.2);
    sgd.lr = 0.05; sgd.momentum = 0.9;
    opt = lt_sgd_create(ctx, lt_ctx_params(ctx), sgd);
    for (i = 0; i < 64; i++) { x[i] = -3.0f + 6.0f * (float)i / 63; y[i] = sinf(x[i]); }
    for (step = 1; step <= 3; step++) {
        lt_tensor *X, *Y, *h, *loss;
        lt_zero_grad(ctx);
        X = lt_tensor_from(ctx, x, 2, s_x); Y = lt_tensor_from(ctx, y, 2, s_x);
        h = lt_tanh(ctx, lt_linear(ctx, X, w1, b1));
        loss = lt_mse_loss(ctx, lt_linear(ctx, h, w2, b2), Y);
        lt_backward(ctx, loss);
        lt_optim_step(opt, -1);
        if (lt_failed(ctx)) { lt_optim_destroy(opt); return lt_error(ctx)[0] ? 1 : 2; }
    }
    lt_optim_destroy(opt);
    return 0;
}
static void test_null_readme_mlp(void) {
    lt_ctx *ctx = lt_ctx_create(42);
    t_check(tn_mlp_body(NULL) == 1, "null/readme_mlp_no_context", "the README's MLP did not stop with a message");
    t_check(ctx && tn_mlp_body(ctx) == 0, "null/readme_mlp_runs", "%s", lt_error(ctx));
    lt_ctx_destroy(ctx);
}

/* Every public function of ltrain.h has a row above (or is exempt). */
static void test_null_coverage(void) {
    FILE *f = fopen("ltrain.h", "r");
    char line[1024], missing[512];
    int n_decl = 0, n_missing = 0;
    size_t used = 0;
    missing[0] = 0;
    if (!f) { t_skip("null/coverage", "ltrain.h not found (run from the repository root)"); return; }
    while (fgets(line, sizeof line, f)) {
        char *p, *q, name[128];
        int i, found = 0;
        if (strncmp(line, "#ifdef LTRAIN_IMPLEMENTATION", 28) == 0) break;   /* declarations only */
        if (strncmp(line, "LTRAIN_DEF ", 11) != 0 || !(q = strchr(line, '('))) continue;
        for (p = q; p > line && (isalnum((unsigned char)p[-1]) || p[-1] == '_'); p--) {}
        if ((size_t)(q - p) >= sizeof name || q == p) continue;
        memcpy(name, p, (size_t)(q - p));
        name[q - p] = 0;
        n_decl++;
        for (i = 0; i < tn_n && !found; i++) found = strcmp(tn_seen[i], name) == 0;
        for (i = 0; i < (int)(sizeof tn_exempt / sizeof tn_exempt[0]) && !found; i++) found = strcmp(tn_exempt[i], name) == 0;
        if (!found) {
            n_missing++;
            if (used + strlen(name) + 2 < sizeof missing) used += (size_t)snprintf(missing + used, sizeof missing - used, " %s", name);
        }
    }
    fclose(f);
    t_check(n_decl > 200 && n_missing == 0, "null/coverage",
            "%d of %d public functions have no row in tests/test_null.c:%s", n_missing, n_decl, missing);
}

static void test_null_all(void) {
    if (!t_want("null/")) return;
    test_null_calls();
    test_null_live();
    test_null_readme_mlp();
    test_null_coverage();
}
