# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What `vllm serve` 0.32.0 accepts (generated; do not edit).

extracted from the installed vllm 0.32.0 by tests/tools/extract_vllm_surface.py
"""

from __future__ import annotations

SURFACE = {
    "version": "0.32.0",
    "source": "extracted from the installed vllm 0.32.0 by tests/tools/extract_vllm_surface.py",
    "options": {
        "--additional-config": {
            "dest": "additional_config",
            "value": True
        },
        "--aggregate-engine-logging": {
            "dest": "aggregate_engine_logging",
            "value": False,
            "default": False
        },
        "--all2all-backend": {
            "dest": "all2all_backend",
            "value": True,
            "default": "allgather_reducescatter",
            "choices": [
                "allgather_reducescatter",
                "deepep_high_throughput",
                "deepep_low_latency",
                "deepep_v2",
                "flashinfer_all2allv",
                "flashinfer_nvlink_one_sided",
                "flashinfer_nvlink_two_sided",
                "moonep",
                "mori_high_throughput",
                "mori_low_latency",
                "naive",
                "nixl_ep",
                "pplx"
            ]
        },
        "--allow-credentials": {
            "dest": "allow_credentials",
            "value": False,
            "default": False
        },
        "--allow-deprecated-quantization": {
            "dest": "allow_deprecated_quantization",
            "value": False,
            "default": False
        },
        "--allowed-headers": {
            "dest": "allowed_headers",
            "value": True
        },
        "--allowed-local-media-path": {
            "dest": "allowed_local_media_path",
            "value": True,
            "default": ""
        },
        "--allowed-media-domains": {
            "dest": "allowed_media_domains",
            "value": True,
            "default": None
        },
        "--allowed-methods": {
            "dest": "allowed_methods",
            "value": True
        },
        "--allowed-origins": {
            "dest": "allowed_origins",
            "value": True
        },
        "--anthropic-disabled-thinking-effort": {
            "dest": "anthropic_disabled_thinking_effort",
            "value": True,
            "default": "auto",
            "choices": [
                "auto",
                "high",
                "low",
                "max",
                "medium",
                "none",
                "xhigh"
            ]
        },
        "--api-key": {
            "dest": "api_key",
            "value": True,
            "default": None
        },
        "--api-server-count": {
            "dest": "api_server_count",
            "value": True,
            "default": None,
            "type": "int"
        },
        "--async-scheduling": {
            "dest": "async_scheduling",
            "value": False,
            "default": None
        },
        "--attention-backend": {
            "dest": "attention_backend",
            "value": True,
            "default": None
        },
        "--attention-config": {
            "dest": "attention_config",
            "value": True
        },
        "--aux-output-config": {
            "dest": "aux_output_config",
            "value": True
        },
        "--block-size": {
            "dest": "block_size",
            "value": True,
            "default": None,
            "type": "int",
            "bounds": {
                "gt": 0
            }
        },
        "--chat-template": {
            "dest": "chat_template",
            "value": True,
            "default": None
        },
        "--chat-template-content-format": {
            "dest": "chat_template_content_format",
            "value": True,
            "default": "auto",
            "choices": [
                "auto",
                "openai",
                "string"
            ]
        },
        "--code-revision": {
            "dest": "code_revision",
            "value": True,
            "default": None
        },
        "--cohere-format": {
            "dest": "cohere_format",
            "value": True,
            "default": "cmd4"
        },
        "--cohere-is-reasoning-model": {
            "dest": "cohere_is_reasoning_model",
            "value": False,
            "default": True
        },
        "--collect-detailed-traces": {
            "dest": "collect_detailed_traces",
            "value": True,
            "default": None,
            "choices": [
                "None",
                "all",
                "model",
                "worker"
            ]
        },
        "--compilation-config": {
            "dest": "compilation_config",
            "value": True
        },
        "--config": {
            "dest": "config",
            "value": True,
            "default": None
        },
        "--config-format": {
            "dest": "config_format",
            "value": True,
            "default": "auto"
        },
        "--convert": {
            "dest": "convert",
            "value": True,
            "default": "auto",
            "choices": [
                "auto",
                "classify",
                "embed",
                "none"
            ]
        },
        "--cp-kv-cache-interleave-size": {
            "dest": "cp_kv_cache_interleave_size",
            "value": True,
            "default": None,
            "type": "int"
        },
        "--cpu-distributed-timeout-seconds": {
            "dest": "cpu_distributed_timeout_seconds",
            "value": True,
            "default": None,
            "type": "int"
        },
        "--cpu-offload-gb": {
            "dest": "cpu_offload_gb",
            "value": True,
            "default": 0,
            "type": "float",
            "bounds": {
                "ge": 0
            }
        },
        "--cpu-offload-params": {
            "dest": "cpu_offload_params",
            "value": True
        },
        "--cudagraph-capture-sizes": {
            "dest": "cudagraph_capture_sizes",
            "value": True,
            "default": None,
            "type": "int"
        },
        "--cudagraph-metrics": {
            "dest": "cudagraph_metrics",
            "value": False,
            "default": False
        },
        "--custom-histogram-buckets": {
            "dest": "custom_histogram_buckets",
            "value": True,
            "default": None
        },
        "--data-parallel-address": {
            "dest": "data_parallel_address",
            "value": True,
            "default": None
        },
        "--data-parallel-backend": {
            "dest": "data_parallel_backend",
            "value": True,
            "default": "mp"
        },
        "--data-parallel-external-lb": {
            "dest": "data_parallel_external_lb",
            "value": False,
            "default": False
        },
        "--data-parallel-hybrid-lb": {
            "dest": "data_parallel_hybrid_lb",
            "value": False,
            "default": False
        },
        "--data-parallel-multi-port-external-lb": {
            "dest": "data_parallel_multi_port_external_lb",
            "value": False,
            "default": False
        },
        "--data-parallel-rank": {
            "dest": "data_parallel_rank",
            "value": True,
            "default": None,
            "type": "int",
            "bounds": {
                "ge": 0
            }
        },
        "--data-parallel-rpc-port": {
            "dest": "data_parallel_rpc_port",
            "value": True,
            "default": None,
            "type": "int",
            "bounds": {
                "ge": 1,
                "le": 65535
            }
        },
        "--data-parallel-size": {
            "dest": "data_parallel_size",
            "value": True,
            "default": 1,
            "type": "int",
            "bounds": {
                "ge": 1
            }
        },
        "--data-parallel-size-local": {
            "dest": "data_parallel_size_local",
            "value": True,
            "default": None,
            "type": "int",
            "bounds": {
                "ge": 0
            }
        },
        "--data-parallel-start-rank": {
            "dest": "data_parallel_start_rank",
            "value": True,
            "default": None,
            "type": "int"
        },
        "--data-parallel-supervisor-port": {
            "dest": "data_parallel_supervisor_port",
            "value": True,
            "default": 9256,
            "type": "int"
        },
        "--dbo-decode-token-threshold": {
            "dest": "dbo_decode_token_threshold",
            "value": True,
            "default": 32,
            "type": "int",
            "bounds": {
                "ge": 0
            }
        },
        "--dbo-prefill-token-threshold": {
            "dest": "dbo_prefill_token_threshold",
            "value": True,
            "default": 512,
            "type": "int",
            "bounds": {
                "ge": 0
            }
        },
        "--dcp-comm-backend": {
            "dest": "dcp_comm_backend",
            "value": True,
            "default": None,
            "choices": [
                "None",
                "a2a",
                "ag_rs"
            ]
        },
        "--dcp-kv-cache-interleave-size": {
            "dest": "dcp_kv_cache_interleave_size",
            "value": True,
            "default": 1,
            "type": "int"
        },
        "--dcp-q-replicate": {
            "dest": "dcp_q_replicate",
            "value": False,
            "default": None
        },
        "--decode-context-parallel-size": {
            "dest": "decode_context_parallel_size",
            "value": True,
            "default": 1,
            "type": "int",
            "bounds": {
                "ge": 1
            }
        },
        "--default-chat-template-kwargs": {
            "dest": "default_chat_template_kwargs",
            "value": True,
            "default": None
        },
        "--default-mm-loras": {
            "dest": "default_mm_loras",
            "value": True,
            "default": None
        },
        "--device-ids": {
            "dest": "device_ids",
            "value": True,
            "default": None
        },
        "--device-memory-utilization": {
            "dest": "gpu_memory_utilization",
            "value": True,
            "default": 0.92,
            "type": "float",
            "bounds": {
                "gt": 0,
                "le": 1
            }
        },
        "--diffusion-config": {
            "dest": "diffusion_config",
            "value": True,
            "default": None
        },
        "--disable-access-log-for-endpoints": {
            "dest": "disable_access_log_for_endpoints",
            "value": True,
            "default": None
        },
        "--disable-cascade-attn": {
            "dest": "disable_cascade_attn",
            "value": False,
            "default": None
        },
        "--disable-chunked-mm-input": {
            "dest": "disable_chunked_mm_input",
            "value": False,
            "default": False
        },
        "--disable-custom-all-reduce": {
            "dest": "disable_custom_all_reduce",
            "value": False,
            "default": False
        },
        "--disable-fastapi-docs": {
            "dest": "disable_fastapi_docs",
            "value": False,
            "default": False
        },
        "--disable-hybrid-kv-cache-manager": {
            "dest": "disable_hybrid_kv_cache_manager",
            "value": False,
            "default": None
        },
        "--disable-log-stats": {
            "dest": "disable_log_stats",
            "value": False,
            "default": False
        },
        "--disable-nccl-for-dp-synchronization": {
            "dest": "disable_nccl_for_dp_synchronization",
            "value": False,
            "default": None
        },
        "--disable-sliding-window": {
            "dest": "disable_sliding_window",
            "value": False,
            "default": False
        },
        "--disable-uvicorn-access-log": {
            "dest": "disable_uvicorn_access_log",
            "value": False,
            "default": False
        },
        "--distributed-executor-backend": {
            "dest": "distributed_executor_backend",
            "value": True,
            "default": None
        },
        "--distributed-timeout-seconds": {
            "dest": "distributed_timeout_seconds",
            "value": True,
            "default": None,
            "type": "int"
        },
        "--download-dir": {
            "dest": "download_dir",
            "value": True,
            "default": None
        },
        "--dp-supervisor-probe-failure-threshold": {
            "dest": "dp_supervisor_probe_failure_threshold",
            "value": True,
            "default": 3,
            "type": "int"
        },
        "--dp-supervisor-probe-interval-s": {
            "dest": "dp_supervisor_probe_interval_s",
            "value": True,
            "default": 5.0,
            "type": "float"
        },
        "--dp-supervisor-probe-timeout-s": {
            "dest": "dp_supervisor_probe_timeout_s",
            "value": True,
            "default": 5.0,
            "type": "float"
        },
        "--dp-sync-interval": {
            "dest": "dp_sync_interval",
            "value": True,
            "default": 16,
            "type": "int",
            "bounds": {
                "ge": 1
            }
        },
        "--dtype": {
            "dest": "dtype",
            "value": True,
            "default": "auto",
            "choices": [
                "auto",
                "bfloat16",
                "float",
                "float16",
                "float32",
                "half"
            ]
        },
        "--ec-manager-config": {
            "dest": "ec_manager_config",
            "value": True
        },
        "--ec-transfer-config": {
            "dest": "ec_transfer_config",
            "value": True,
            "default": None
        },
        "--elastic-ep-max-dp-size": {
            "dest": "elastic_ep_max_dp_size",
            "value": True,
            "default": None,
            "type": "int",
            "bounds": {
                "ge": 1
            }
        },
        "--enable-auto-tool-choice": {
            "dest": "enable_auto_tool_choice",
            "value": False,
            "default": False
        },
        "--enable-batch-sharded-sampling": {
            "dest": "enable_batch_sharded_sampling",
            "value": False,
            "default": None
        },
        "--enable-chunked-prefill": {
            "dest": "enable_chunked_prefill",
            "value": False,
            "default": None
        },
        "--enable-cumem-allocator": {
            "dest": "enable_cumem_allocator",
            "value": False,
            "default": False
        },
        "--enable-dbo": {
            "dest": "enable_dbo",
            "value": False,
            "default": False
        },
        "--enable-elastic-ep": {
            "dest": "enable_elastic_ep",
            "value": False,
            "default": False
        },
        "--enable-ep-weight-filter": {
            "dest": "enable_ep_weight_filter",
            "value": False,
            "default": False
        },
        "--enable-eplb": {
            "dest": "enable_eplb",
            "value": False,
            "default": False
        },
        "--enable-expert-parallel": {
            "dest": "enable_expert_parallel",
            "value": False,
            "default": False
        },
        "--enable-fault-tolerance": {
            "dest": "enable_fault_tolerance",
            "value": False,
            "default": False
        },
        "--enable-flash-late-interaction": {
            "dest": "enable_flash_late_interaction",
            "value": False,
            "default": True
        },
        "--enable-flashinfer-autotune": {
            "dest": "enable_flashinfer_autotune",
            "value": False,
            "default": None
        },
        "--enable-force-include-usage": {
            "dest": "enable_force_include_usage",
            "value": False,
            "default": False
        },
        "--enable-hc-sp": {
            "dest": "enable_hc_sp",
            "value": False,
            "default": False
        },
        "--enable-layerwise-nvtx-tracing": {
            "dest": "enable_layerwise_nvtx_tracing",
            "value": False,
            "default": False
        },
        "--enable-log-deltas": {
            "dest": "enable_log_deltas",
            "value": False,
            "default": True
        },
        "--enable-log-outputs": {
            "dest": "enable_log_outputs",
            "value": False,
            "default": False
        },
        "--enable-log-requests": {
            "dest": "enable_log_requests",
            "value": False,
            "default": False
        },
        "--enable-logging-iteration-details": {
            "dest": "enable_logging_iteration_details",
            "value": False,
            "default": False
        },
        "--enable-lora": {
            "dest": "enable_lora",
            "value": False,
            "default": None
        },
        "--enable-mamba-cache-stochastic-rounding": {
            "dest": "enable_mamba_cache_stochastic_rounding",
            "value": False,
            "default": False
        },
        "--enable-mamba-shared-prefix-checkpoint": {
            "dest": "enable_mamba_shared_prefix_checkpoint",
            "value": False,
            "default": False
        },
        "--enable-mfu-metrics": {
            "dest": "enable_mfu_metrics",
            "value": False,
            "default": False
        },
        "--enable-mixed-moe-lora-format": {
            "dest": "enable_mixed_moe_lora_format",
            "value": False,
            "default": False
        },
        "--enable-mm-embeds": {
            "dest": "enable_mm_embeds",
            "value": False,
            "default": False
        },
        "--enable-moe-shared-loras": {
            "dest": "enable_moe_shared_loras",
            "value": False,
            "default": False
        },
        "--enable-nccl-comm-suspend": {
            "dest": "enable_nccl_comm_suspend",
            "value": False,
            "default": False
        },
        "--enable-offline-docs": {
            "dest": "enable_offline_docs",
            "value": False,
            "default": False
        },
        "--enable-per-request-metrics": {
            "dest": "enable_per_request_metrics",
            "value": False,
            "default": False
        },
        "--enable-prefix-caching": {
            "dest": "enable_prefix_caching",
            "value": False,
            "default": None
        },
        "--enable-prompt-embeds": {
            "dest": "enable_prompt_embeds",
            "value": False,
            "default": False
        },
        "--enable-prompt-tokens-details": {
            "dest": "enable_prompt_tokens_details",
            "value": False,
            "default": False
        },
        "--enable-request-id-headers": {
            "dest": "enable_request_id_headers",
            "value": False,
            "default": False
        },
        "--enable-return-routed-experts": {
            "dest": "enable_return_routed_experts",
            "value": False,
            "default": False
        },
        "--enable-scale-out": {
            "dest": "enable_scale_out",
            "value": False,
            "default": False
        },
        "--enable-server-load-tracking": {
            "dest": "enable_server_load_tracking",
            "value": False,
            "default": False
        },
        "--enable-shm-tensor-arena": {
            "dest": "enable_shm_tensor_arena",
            "value": False,
            "default": False
        },
        "--enable-sleep-mode": {
            "dest": "enable_sleep_mode",
            "value": False,
            "default": False
        },
        "--enable-ssl-refresh": {
            "dest": "enable_ssl_refresh",
            "value": False,
            "default": False
        },
        "--enable-tokenizer-info-endpoint": {
            "dest": "enable_tokenizer_info_endpoint",
            "value": False,
            "default": False
        },
        "--enable-tower-connector-lora": {
            "dest": "enable_tower_connector_lora",
            "value": False,
            "default": False
        },
        "--enable-trace-replay": {
            "dest": "enable_trace_replay",
            "value": False,
            "default": False
        },
        "--enforce-eager": {
            "dest": "enforce_eager",
            "value": False,
            "default": False
        },
        "--engram-config": {
            "dest": "engram_config",
            "value": True,
            "default": None
        },
        "--eplb-config": {
            "dest": "eplb_config",
            "value": True
        },
        "--exclude-tools-when-tool-choice-none": {
            "dest": "exclude_tools_when_tool_choice_none",
            "value": False,
            "default": False
        },
        "--expert-placement-strategy": {
            "dest": "expert_placement_strategy",
            "value": True,
            "default": "linear",
            "choices": [
                "linear",
                "round_robin"
            ]
        },
        "--fail-on-environ-validation": {
            "dest": "fail_on_environ_validation",
            "value": False,
            "default": False
        },
        "--fault-tolerance-config": {
            "dest": "fault_tolerance_config",
            "value": True
        },
        "--fingerprint-mode": {
            "dest": "fingerprint_mode",
            "value": True,
            "default": "full",
            "choices": [
                "custom",
                "full",
                "hash",
                "none"
            ]
        },
        "--fingerprint-value": {
            "dest": "fingerprint_value",
            "value": True,
            "default": None
        },
        "--fully-sharded-loras": {
            "dest": "fully_sharded_loras",
            "value": False,
            "default": False
        },
        "--gdn-prefill-backend": {
            "dest": "gdn_prefill_backend",
            "value": True,
            "default": None,
            "choices": [
                "aiter_flydsl",
                "cutedsl",
                "flashinfer",
                "triton"
            ]
        },
        "--generation-config": {
            "dest": "generation_config",
            "value": True,
            "default": "auto"
        },
        "--gpu-memory-utilization": {
            "dest": "gpu_memory_utilization",
            "value": True,
            "default": 0.92,
            "type": "float",
            "bounds": {
                "gt": 0,
                "le": 1
            }
        },
        "--grpc": {
            "dest": "grpc",
            "value": False,
            "default": False
        },
        "--grpc-port": {
            "dest": "grpc_port",
            "value": True,
            "default": None,
            "type": "int"
        },
        "--h11-max-header-count": {
            "dest": "h11_max_header_count",
            "value": True,
            "default": 256,
            "type": "int"
        },
        "--h11-max-incomplete-event-size": {
            "dest": "h11_max_incomplete_event_size",
            "value": True,
            "default": 4194304,
            "type": "int"
        },
        "--headless": {
            "dest": "headless",
            "value": False,
            "default": False
        },
        "--hf-config-path": {
            "dest": "hf_config_path",
            "value": True,
            "default": None
        },
        "--hf-overrides": {
            "dest": "hf_overrides",
            "value": True
        },
        "--hf-token": {
            "dest": "hf_token",
            "value": True,
            "default": None
        },
        "--host": {
            "dest": "host",
            "value": True,
            "default": None
        },
        "--ignore-patterns": {
            "dest": "ignore_patterns",
            "value": True
        },
        "--interleave-mm-strings": {
            "dest": "interleave_mm_strings",
            "value": False,
            "default": False
        },
        "--io-processor-plugin": {
            "dest": "io_processor_plugin",
            "value": True,
            "default": None
        },
        "--ir-op-priority": {
            "dest": "ir_op_priority",
            "value": True
        },
        "--jit-monitor-mode": {
            "dest": "jit_monitor_mode",
            "value": True,
            "default": "warn",
            "choices": [
                "error",
                "warn"
            ]
        },
        "--jit-monitor-verbose": {
            "dest": "jit_monitor_verbose",
            "value": False,
            "default": False
        },
        "--kda-decode-backend": {
            "dest": "kda_decode_backend",
            "value": True,
            "default": None,
            "choices": [
                "auto",
                "flashinfer",
                "native",
                "triton"
            ]
        },
        "--kda-prefill-backend": {
            "dest": "kda_prefill_backend",
            "value": True,
            "default": None,
            "choices": [
                "auto",
                "flashinfer",
                "flashkda",
                "fused",
                "triton"
            ]
        },
        "--kernel-config": {
            "dest": "kernel_config",
            "value": True
        },
        "--kv-cache-dtype": {
            "dest": "kv_cache_dtype",
            "value": True,
            "default": "auto",
            "choices": [
                "auto",
                "bfloat16",
                "float16",
                "fp8",
                "fp8_ds_mla",
                "fp8_e4m3",
                "fp8_e5m2",
                "fp8_inc",
                "fp8_per_token_head",
                "int4_per_token_head",
                "int8_per_token_head",
                "nvfp4",
                "nvfp4_4over6",
                "nvfp4_ds_mla",
                "turboquant_3bit_nc",
                "turboquant_4bit_nc",
                "turboquant_k3v4_nc",
                "turboquant_k8v4",
                "ultraquant_4bit"
            ]
        },
        "--kv-cache-dtype-skip-layers": {
            "dest": "kv_cache_dtype_skip_layers",
            "value": True
        },
        "--kv-cache-memory-bytes": {
            "dest": "kv_cache_memory_bytes",
            "value": True,
            "default": None,
            "type": "human_int"
        },
        "--kv-cache-metrics": {
            "dest": "kv_cache_metrics",
            "value": False,
            "default": False
        },
        "--kv-cache-metrics-sample": {
            "dest": "kv_cache_metrics_sample",
            "value": True,
            "default": 0.01,
            "type": "float",
            "bounds": {
                "gt": 0,
                "le": 1
            }
        },
        "--kv-events-config": {
            "dest": "kv_events_config",
            "value": True,
            "default": None
        },
        "--kv-offloading-backend": {
            "dest": "kv_offloading_backend",
            "value": True,
            "default": "native",
            "choices": [
                "lmcache",
                "native"
            ]
        },
        "--kv-offloading-size": {
            "dest": "kv_offloading_size",
            "value": True,
            "default": None,
            "type": "float"
        },
        "--kv-sharing-fast-prefill": {
            "dest": "kv_sharing_fast_prefill",
            "value": False,
            "default": False
        },
        "--kv-transfer-config": {
            "dest": "kv_transfer_config",
            "value": True,
            "default": None
        },
        "--language-model-only": {
            "dest": "language_model_only",
            "value": False,
            "default": False
        },
        "--limit-mm-per-prompt": {
            "dest": "limit_mm_per_prompt",
            "value": True
        },
        "--linear-backend": {
            "dest": "linear_backend",
            "value": True,
            "default": "auto",
            "choices": [
                "aiter",
                "auto",
                "b12x",
                "conch",
                "cutlass",
                "deep_gemm",
                "emulation",
                "exllama",
                "fbgemm",
                "flashinfer_b12x",
                "flashinfer_cudnn",
                "flashinfer_cutedsl",
                "flashinfer_cutlass",
                "flashinfer_trtllm",
                "humming",
                "machete",
                "marlin",
                "torch",
                "triton",
                "xpu",
                "xpu_woq"
            ]
        },
        "--load-format": {
            "dest": "load_format",
            "value": True,
            "default": "auto"
        },
        "--log-config-file": {
            "dest": "log_config_file",
            "value": True,
            "default": "==SUPPRESS=="
        },
        "--log-error-stack": {
            "dest": "log_error_stack",
            "value": False,
            "default": False
        },
        "--log-level": {
            "dest": "log_level",
            "value": True,
            "default": "==SUPPRESS==",
            "choices": [
                "CRITICAL",
                "DEBUG",
                "ERROR",
                "INFO",
                "NOTSET",
                "WARNING"
            ]
        },
        "--logging-config": {
            "dest": "logging_config",
            "value": True,
            "default": "==SUPPRESS=="
        },
        "--logits-processors": {
            "dest": "logits_processors",
            "value": True,
            "default": None
        },
        "--logprobs-mode": {
            "dest": "logprobs_mode",
            "value": True,
            "default": "raw_logprobs",
            "choices": [
                "processed_logits",
                "processed_logprobs",
                "raw_logits",
                "raw_logprobs"
            ]
        },
        "--long-prefill-token-threshold": {
            "dest": "long_prefill_token_threshold",
            "value": True,
            "default": 0,
            "type": "int",
            "bounds": {
                "ge": 0
            }
        },
        "--long-prefill-token-threshold-adaptive": {
            "dest": "long_prefill_token_threshold_adaptive",
            "value": False,
            "default": False
        },
        "--lora-dtype": {
            "dest": "lora_dtype",
            "value": True,
            "default": "auto",
            "choices": [
                "auto",
                "bfloat16",
                "float16"
            ]
        },
        "--lora-modules": {
            "dest": "lora_modules",
            "value": True,
            "default": None
        },
        "--lora-target-modules": {
            "dest": "lora_target_modules",
            "value": True,
            "default": None
        },
        "--mamba-backend": {
            "dest": "mamba_backend",
            "value": True
        },
        "--mamba-block-size": {
            "dest": "mamba_block_size",
            "value": True,
            "default": None,
            "type": "int",
            "bounds": {
                "gt": 0
            }
        },
        "--mamba-cache-dtype": {
            "dest": "mamba_cache_dtype",
            "value": True,
            "default": "auto",
            "choices": [
                "auto",
                "bfloat16",
                "float16",
                "float32"
            ]
        },
        "--mamba-cache-mode": {
            "dest": "mamba_cache_mode",
            "value": True,
            "default": "none",
            "choices": [
                "align",
                "none"
            ]
        },
        "--mamba-cache-philox-rounds": {
            "dest": "mamba_cache_philox_rounds",
            "value": True,
            "default": 0,
            "type": "int"
        },
        "--mamba-ssm-cache-dtype": {
            "dest": "mamba_ssm_cache_dtype",
            "value": True,
            "default": "auto",
            "choices": [
                "auto",
                "bfloat16",
                "float16",
                "float32"
            ]
        },
        "--mamba-ssu-algorithm": {
            "dest": "mamba_ssu_algorithm",
            "value": True,
            "default": None,
            "choices": [
                "None",
                "auto",
                "horizontal",
                "simple",
                "vertical"
            ]
        },
        "--master-addr": {
            "dest": "master_addr",
            "value": True,
            "default": "127.0.0.1"
        },
        "--master-port": {
            "dest": "master_port",
            "value": True,
            "default": 29501,
            "type": "int"
        },
        "--max-cpu-loras": {
            "dest": "max_cpu_loras",
            "value": True,
            "default": None,
            "type": "int"
        },
        "--max-cudagraph-capture-size": {
            "dest": "max_cudagraph_capture_size",
            "value": True,
            "default": None,
            "type": "int"
        },
        "--max-log-len": {
            "dest": "max_log_len",
            "value": True,
            "default": None,
            "type": "int"
        },
        "--max-logprobs": {
            "dest": "max_logprobs",
            "value": True,
            "default": 20,
            "type": "int",
            "bounds": {
                "ge": -1
            }
        },
        "--max-lora-cls-labels": {
            "dest": "max_lora_cls_labels",
            "value": True,
            "default": None,
            "type": "int",
            "bounds": {
                "ge": 1
            }
        },
        "--max-lora-rank": {
            "dest": "max_lora_rank",
            "value": True,
            "default": 16,
            "choices": [
                "1",
                "128",
                "16",
                "256",
                "32",
                "320",
                "512",
                "64",
                "8"
            ],
            "type": "int"
        },
        "--max-loras": {
            "dest": "max_loras",
            "value": True,
            "default": 1,
            "type": "int",
            "bounds": {
                "ge": 1
            }
        },
        "--max-model-len": {
            "dest": "max_model_len",
            "value": True,
            "default": None,
            "type": "human_int_or_auto",
            "bounds": {
                "ge": -1
            }
        },
        "--max-num-active-seqs": {
            "dest": "max_num_active_seqs",
            "value": True,
            "default": None,
            "type": "int",
            "bounds": {
                "ge": 1
            }
        },
        "--max-num-batched-tokens": {
            "dest": "max_num_batched_tokens",
            "value": True,
            "default": None,
            "type": "human_int",
            "bounds": {
                "ge": 1
            }
        },
        "--max-num-queued-reqs": {
            "dest": "max_num_queued_reqs",
            "value": True,
            "default": None,
            "type": "int",
            "bounds": {
                "ge": 0
            }
        },
        "--max-num-queued-tokens": {
            "dest": "max_num_queued_tokens",
            "value": True,
            "default": None,
            "type": "human_int",
            "bounds": {
                "ge": 0
            }
        },
        "--max-num-scheduled-tokens": {
            "dest": "max_num_scheduled_tokens",
            "value": True,
            "default": None,
            "type": "human_int",
            "bounds": {
                "ge": 1
            }
        },
        "--max-num-seqs": {
            "dest": "max_num_seqs",
            "value": True,
            "default": None,
            "type": "int",
            "bounds": {
                "ge": 1
            }
        },
        "--max-parallel-loading-workers": {
            "dest": "max_parallel_loading_workers",
            "value": True,
            "default": None,
            "type": "int",
            "bounds": {
                "ge": 1
            }
        },
        "--media-io-kwargs": {
            "dest": "media_io_kwargs",
            "value": True
        },
        "--middleware": {
            "dest": "middleware",
            "value": True
        },
        "--mm-device-do-normalize": {
            "dest": "mm_device_do_normalize",
            "value": False,
            "default": None
        },
        "--mm-encoder-attn-backend": {
            "dest": "mm_encoder_attn_backend",
            "value": True,
            "default": None
        },
        "--mm-encoder-attn-dtype": {
            "dest": "mm_encoder_attn_dtype",
            "value": True,
            "default": None,
            "choices": [
                "None",
                "fp8"
            ]
        },
        "--mm-encoder-fp8-scale-path": {
            "dest": "mm_encoder_fp8_scale_path",
            "value": True,
            "default": None
        },
        "--mm-encoder-fp8-scale-save-margin": {
            "dest": "mm_encoder_fp8_scale_save_margin",
            "value": True,
            "default": 1.5,
            "type": "float",
            "bounds": {
                "gt": 0.0
            }
        },
        "--mm-encoder-fp8-scale-save-path": {
            "dest": "mm_encoder_fp8_scale_save_path",
            "value": True,
            "default": None
        },
        "--mm-encoder-only": {
            "dest": "mm_encoder_only",
            "value": False,
            "default": False
        },
        "--mm-encoder-tp-mode": {
            "dest": "mm_encoder_tp_mode",
            "value": True,
            "default": "weights",
            "choices": [
                "data",
                "weights"
            ]
        },
        "--mm-hasher-algorithm": {
            "dest": "mm_hasher_algorithm",
            "value": True,
            "default": "blake3",
            "choices": [
                "blake3",
                "sha256",
                "sha512"
            ]
        },
        "--mm-ipc-gpu-memory-gb": {
            "dest": "mm_ipc_gpu_memory_gb",
            "value": True,
            "default": 0,
            "type": "float",
            "bounds": {
                "ge": 0
            }
        },
        "--mm-processor-cache-gb": {
            "dest": "mm_processor_cache_gb",
            "value": True,
            "default": 4,
            "type": "float",
            "bounds": {
                "ge": 0
            }
        },
        "--mm-processor-cache-type": {
            "dest": "mm_processor_cache_type",
            "value": True,
            "default": "lru",
            "choices": [
                "lru",
                "shm"
            ]
        },
        "--mm-processor-device": {
            "dest": "mm_processor_device",
            "value": True,
            "default": "auto",
            "choices": [
                "auto",
                "cpu"
            ]
        },
        "--mm-processor-kwargs": {
            "dest": "mm_processor_kwargs",
            "value": True,
            "default": None
        },
        "--mm-shm-cache-max-object-size-mb": {
            "dest": "mm_shm_cache_max_object_size_mb",
            "value": True,
            "default": 128,
            "type": "int",
            "bounds": {
                "ge": 0
            }
        },
        "--mm-tensor-ipc": {
            "dest": "mm_tensor_ipc",
            "value": True,
            "default": "direct_rpc",
            "choices": [
                "direct_rpc",
                "torch_shm"
            ]
        },
        "--model": {
            "dest": "model",
            "value": True,
            "default": "Qwen/Qwen3-0.6B"
        },
        "--model-class-overrides": {
            "dest": "model_class_overrides",
            "value": True
        },
        "--model-impl": {
            "dest": "model_impl",
            "value": True,
            "default": "auto"
        },
        "--model-loader-extra-config": {
            "dest": "model_loader_extra_config",
            "value": True
        },
        "--moe-backend": {
            "dest": "moe_backend",
            "value": True,
            "default": "auto",
            "choices": [
                "aiter",
                "aiter_mega_moe",
                "aiter_triton_mxfp4_bf16",
                "auto",
                "b12x",
                "batched_triton",
                "cutlass",
                "deep_gemm",
                "deep_gemm_mega_moe",
                "emulation",
                "flashinfer_b12x",
                "flashinfer_cutedsl",
                "flashinfer_cutlass",
                "flashinfer_moe_ep_cutedsl",
                "flashinfer_moe_ep_mega_deep_gemm",
                "flashinfer_trtllm",
                "flydsl",
                "hpc",
                "humming",
                "marlin",
                "rdna3",
                "triton",
                "triton_unfused"
            ]
        },
        "--nnodes": {
            "dest": "nnodes",
            "value": True,
            "default": 1,
            "type": "int",
            "bounds": {
                "ge": 1
            }
        },
        "--no-allow-credentials": {
            "dest": "allow_credentials",
            "value": False,
            "default": False
        },
        "--no-allow-deprecated-quantization": {
            "dest": "allow_deprecated_quantization",
            "value": False,
            "default": False
        },
        "--no-async-scheduling": {
            "dest": "async_scheduling",
            "value": False,
            "default": None
        },
        "--no-cohere-is-reasoning-model": {
            "dest": "cohere_is_reasoning_model",
            "value": False,
            "default": True
        },
        "--no-cudagraph-metrics": {
            "dest": "cudagraph_metrics",
            "value": False,
            "default": False
        },
        "--no-data-parallel-external-lb": {
            "dest": "data_parallel_external_lb",
            "value": False,
            "default": False
        },
        "--no-data-parallel-hybrid-lb": {
            "dest": "data_parallel_hybrid_lb",
            "value": False,
            "default": False
        },
        "--no-dcp-q-replicate": {
            "dest": "dcp_q_replicate",
            "value": False,
            "default": None
        },
        "--no-disable-cascade-attn": {
            "dest": "disable_cascade_attn",
            "value": False,
            "default": None
        },
        "--no-disable-chunked-mm-input": {
            "dest": "disable_chunked_mm_input",
            "value": False,
            "default": False
        },
        "--no-disable-custom-all-reduce": {
            "dest": "disable_custom_all_reduce",
            "value": False,
            "default": False
        },
        "--no-disable-fastapi-docs": {
            "dest": "disable_fastapi_docs",
            "value": False,
            "default": False
        },
        "--no-disable-hybrid-kv-cache-manager": {
            "dest": "disable_hybrid_kv_cache_manager",
            "value": False,
            "default": None
        },
        "--no-disable-nccl-for-dp-synchronization": {
            "dest": "disable_nccl_for_dp_synchronization",
            "value": False,
            "default": None
        },
        "--no-disable-sliding-window": {
            "dest": "disable_sliding_window",
            "value": False,
            "default": False
        },
        "--no-disable-uvicorn-access-log": {
            "dest": "disable_uvicorn_access_log",
            "value": False,
            "default": False
        },
        "--no-enable-auto-tool-choice": {
            "dest": "enable_auto_tool_choice",
            "value": False,
            "default": False
        },
        "--no-enable-batch-sharded-sampling": {
            "dest": "enable_batch_sharded_sampling",
            "value": False,
            "default": None
        },
        "--no-enable-chunked-prefill": {
            "dest": "enable_chunked_prefill",
            "value": False,
            "default": None
        },
        "--no-enable-cumem-allocator": {
            "dest": "enable_cumem_allocator",
            "value": False,
            "default": False
        },
        "--no-enable-dbo": {
            "dest": "enable_dbo",
            "value": False,
            "default": False
        },
        "--no-enable-elastic-ep": {
            "dest": "enable_elastic_ep",
            "value": False,
            "default": False
        },
        "--no-enable-ep-weight-filter": {
            "dest": "enable_ep_weight_filter",
            "value": False,
            "default": False
        },
        "--no-enable-eplb": {
            "dest": "enable_eplb",
            "value": False,
            "default": False
        },
        "--no-enable-expert-parallel": {
            "dest": "enable_expert_parallel",
            "value": False,
            "default": False
        },
        "--no-enable-fault-tolerance": {
            "dest": "enable_fault_tolerance",
            "value": False,
            "default": False
        },
        "--no-enable-flash-late-interaction": {
            "dest": "enable_flash_late_interaction",
            "value": False,
            "default": True
        },
        "--no-enable-flashinfer-autotune": {
            "dest": "enable_flashinfer_autotune",
            "value": False,
            "default": None
        },
        "--no-enable-force-include-usage": {
            "dest": "enable_force_include_usage",
            "value": False,
            "default": False
        },
        "--no-enable-hc-sp": {
            "dest": "enable_hc_sp",
            "value": False,
            "default": False
        },
        "--no-enable-layerwise-nvtx-tracing": {
            "dest": "enable_layerwise_nvtx_tracing",
            "value": False,
            "default": False
        },
        "--no-enable-log-deltas": {
            "dest": "enable_log_deltas",
            "value": False,
            "default": True
        },
        "--no-enable-log-outputs": {
            "dest": "enable_log_outputs",
            "value": False,
            "default": False
        },
        "--no-enable-log-requests": {
            "dest": "enable_log_requests",
            "value": False,
            "default": False
        },
        "--no-enable-logging-iteration-details": {
            "dest": "enable_logging_iteration_details",
            "value": False,
            "default": False
        },
        "--no-enable-lora": {
            "dest": "enable_lora",
            "value": False,
            "default": None
        },
        "--no-enable-mamba-cache-stochastic-rounding": {
            "dest": "enable_mamba_cache_stochastic_rounding",
            "value": False,
            "default": False
        },
        "--no-enable-mamba-shared-prefix-checkpoint": {
            "dest": "enable_mamba_shared_prefix_checkpoint",
            "value": False,
            "default": False
        },
        "--no-enable-mfu-metrics": {
            "dest": "enable_mfu_metrics",
            "value": False,
            "default": False
        },
        "--no-enable-mixed-moe-lora-format": {
            "dest": "enable_mixed_moe_lora_format",
            "value": False,
            "default": False
        },
        "--no-enable-mm-embeds": {
            "dest": "enable_mm_embeds",
            "value": False,
            "default": False
        },
        "--no-enable-moe-shared-loras": {
            "dest": "enable_moe_shared_loras",
            "value": False,
            "default": False
        },
        "--no-enable-nccl-comm-suspend": {
            "dest": "enable_nccl_comm_suspend",
            "value": False,
            "default": False
        },
        "--no-enable-offline-docs": {
            "dest": "enable_offline_docs",
            "value": False,
            "default": False
        },
        "--no-enable-per-request-metrics": {
            "dest": "enable_per_request_metrics",
            "value": False,
            "default": False
        },
        "--no-enable-prefix-caching": {
            "dest": "enable_prefix_caching",
            "value": False,
            "default": None
        },
        "--no-enable-prompt-embeds": {
            "dest": "enable_prompt_embeds",
            "value": False,
            "default": False
        },
        "--no-enable-prompt-tokens-details": {
            "dest": "enable_prompt_tokens_details",
            "value": False,
            "default": False
        },
        "--no-enable-request-id-headers": {
            "dest": "enable_request_id_headers",
            "value": False,
            "default": False
        },
        "--no-enable-return-routed-experts": {
            "dest": "enable_return_routed_experts",
            "value": False,
            "default": False
        },
        "--no-enable-scale-out": {
            "dest": "enable_scale_out",
            "value": False,
            "default": False
        },
        "--no-enable-server-load-tracking": {
            "dest": "enable_server_load_tracking",
            "value": False,
            "default": False
        },
        "--no-enable-shm-tensor-arena": {
            "dest": "enable_shm_tensor_arena",
            "value": False,
            "default": False
        },
        "--no-enable-sleep-mode": {
            "dest": "enable_sleep_mode",
            "value": False,
            "default": False
        },
        "--no-enable-ssl-refresh": {
            "dest": "enable_ssl_refresh",
            "value": False,
            "default": False
        },
        "--no-enable-tokenizer-info-endpoint": {
            "dest": "enable_tokenizer_info_endpoint",
            "value": False,
            "default": False
        },
        "--no-enable-tower-connector-lora": {
            "dest": "enable_tower_connector_lora",
            "value": False,
            "default": False
        },
        "--no-enable-trace-replay": {
            "dest": "enable_trace_replay",
            "value": False,
            "default": False
        },
        "--no-enforce-eager": {
            "dest": "enforce_eager",
            "value": False,
            "default": False
        },
        "--no-exclude-tools-when-tool-choice-none": {
            "dest": "exclude_tools_when_tool_choice_none",
            "value": False,
            "default": False
        },
        "--no-fail-on-environ-validation": {
            "dest": "fail_on_environ_validation",
            "value": False,
            "default": False
        },
        "--no-fully-sharded-loras": {
            "dest": "fully_sharded_loras",
            "value": False,
            "default": False
        },
        "--no-interleave-mm-strings": {
            "dest": "interleave_mm_strings",
            "value": False,
            "default": False
        },
        "--no-jit-monitor-verbose": {
            "dest": "jit_monitor_verbose",
            "value": False,
            "default": False
        },
        "--no-kv-cache-metrics": {
            "dest": "kv_cache_metrics",
            "value": False,
            "default": False
        },
        "--no-kv-sharing-fast-prefill": {
            "dest": "kv_sharing_fast_prefill",
            "value": False,
            "default": False
        },
        "--no-language-model-only": {
            "dest": "language_model_only",
            "value": False,
            "default": False
        },
        "--no-log-error-stack": {
            "dest": "log_error_stack",
            "value": False,
            "default": False
        },
        "--no-long-prefill-token-threshold-adaptive": {
            "dest": "long_prefill_token_threshold_adaptive",
            "value": False,
            "default": False
        },
        "--no-mm-device-do-normalize": {
            "dest": "mm_device_do_normalize",
            "value": False,
            "default": None
        },
        "--no-mm-encoder-only": {
            "dest": "mm_encoder_only",
            "value": False,
            "default": False
        },
        "--no-numa-bind": {
            "dest": "numa_bind",
            "value": False,
            "default": False
        },
        "--no-ray-workers-use-nsight": {
            "dest": "ray_workers_use_nsight",
            "value": False,
            "default": False
        },
        "--no-return-sampling-mask": {
            "dest": "return_sampling_mask",
            "value": False,
            "default": False
        },
        "--no-return-tokens-as-token-ids": {
            "dest": "return_tokens_as_token_ids",
            "value": False,
            "default": False
        },
        "--no-scheduler-reserve-full-isl": {
            "dest": "scheduler_reserve_full_isl",
            "value": False,
            "default": True
        },
        "--no-skip-mm-profiling": {
            "dest": "skip_mm_profiling",
            "value": False,
            "default": False
        },
        "--no-skip-tokenizer-init": {
            "dest": "skip_tokenizer_init",
            "value": False,
            "default": False
        },
        "--no-sleep-mode-offload-cudagraph": {
            "dest": "sleep_mode_offload_cudagraph",
            "value": False,
            "default": False
        },
        "--no-specialize-active-lora": {
            "dest": "specialize_active_lora",
            "value": False,
            "default": False
        },
        "--no-swa-bounded-replay": {
            "dest": "swa_bounded_replay",
            "value": False,
            "default": True
        },
        "--no-tokens-only": {
            "dest": "tokens_only",
            "value": False,
            "default": False
        },
        "--no-trust-remote-code": {
            "dest": "trust_remote_code",
            "value": False,
            "default": False
        },
        "--no-trust-request-chat-template": {
            "dest": "trust_request_chat_template",
            "value": False,
            "default": False
        },
        "--no-trust-request-mm-kwargs": {
            "dest": "trust_request_mm_kwargs",
            "value": False,
            "default": False
        },
        "--no-use-fp64-gumbel": {
            "dest": "use_fp64_gumbel",
            "value": False,
            "default": False
        },
        "--no-use-replayssm": {
            "dest": "use_replayssm",
            "value": False,
            "default": False
        },
        "--no-use-tqdm-on-load": {
            "dest": "use_tqdm_on_load",
            "value": False,
            "default": True
        },
        "--node-rank": {
            "dest": "node_rank",
            "value": True,
            "default": 0,
            "type": "int",
            "bounds": {
                "ge": 0
            }
        },
        "--num-gpu-blocks-override": {
            "dest": "num_gpu_blocks_override",
            "value": True,
            "default": None,
            "type": "int"
        },
        "--numa-bind": {
            "dest": "numa_bind",
            "value": False,
            "default": False
        },
        "--numa-bind-cpus": {
            "dest": "numa_bind_cpus",
            "value": True,
            "default": None
        },
        "--numa-bind-nodes": {
            "dest": "numa_bind_nodes",
            "value": True,
            "default": None,
            "type": "int"
        },
        "--offload-backend": {
            "dest": "offload_backend",
            "value": True,
            "default": "auto",
            "choices": [
                "auto",
                "prefetch",
                "uva"
            ]
        },
        "--offload-group-size": {
            "dest": "offload_group_size",
            "value": True,
            "default": 0,
            "type": "int",
            "bounds": {
                "ge": 0
            }
        },
        "--offload-num-in-group": {
            "dest": "offload_num_in_group",
            "value": True,
            "default": 1,
            "type": "int",
            "bounds": {
                "ge": 1
            }
        },
        "--offload-params": {
            "dest": "offload_params",
            "value": True
        },
        "--offload-prefetch-step": {
            "dest": "offload_prefetch_step",
            "value": True,
            "default": 1,
            "type": "int",
            "bounds": {
                "ge": 0
            }
        },
        "--optimization-level": {
            "dest": "optimization_level",
            "value": True,
            "default": 2
        },
        "--otlp-traces-endpoint": {
            "dest": "otlp_traces_endpoint",
            "value": True,
            "default": None
        },
        "--override-generation-config": {
            "dest": "override_generation_config",
            "value": True
        },
        "--per-request-spec-decode-metrics": {
            "dest": "per_request_spec_decode_metrics",
            "value": True,
            "default": "none",
            "choices": [
                "detailed",
                "none",
                "summary"
            ]
        },
        "--performance-mode": {
            "dest": "performance_mode",
            "value": True,
            "default": "balanced",
            "choices": [
                "balanced",
                "interactivity",
                "throughput"
            ]
        },
        "--pipeline-parallel-size": {
            "dest": "pipeline_parallel_size",
            "value": True,
            "default": 1,
            "type": "int",
            "bounds": {
                "ge": 1
            }
        },
        "--pooler-config": {
            "dest": "pooler_config",
            "value": True,
            "default": None
        },
        "--port": {
            "dest": "port",
            "value": True,
            "default": 8000,
            "type": "int"
        },
        "--prefill-context-parallel-size": {
            "dest": "prefill_context_parallel_size",
            "value": True,
            "default": 1,
            "type": "int",
            "bounds": {
                "ge": 1
            }
        },
        "--prefill-schedule-interval": {
            "dest": "prefill_schedule_interval",
            "value": True,
            "default": 1,
            "type": "int",
            "bounds": {
                "ge": 1
            }
        },
        "--prefix-cache-retention-interval": {
            "dest": "prefix_cache_retention_interval",
            "value": True,
            "default": 0,
            "type": "int",
            "bounds": {
                "ge": 0
            }
        },
        "--prefix-caching-hash-algo": {
            "dest": "prefix_caching_hash_algo",
            "value": True,
            "default": "sha256",
            "choices": [
                "sha256",
                "sha256_cbor",
                "xxhash",
                "xxhash_cbor"
            ]
        },
        "--prefix-match-unit": {
            "dest": "prefix_match_unit",
            "value": True,
            "default": None,
            "type": "int",
            "bounds": {
                "gt": 0
            }
        },
        "--profiler-config": {
            "dest": "profiler_config",
            "value": True
        },
        "--pt-load-map-location": {
            "dest": "pt_load_map_location",
            "value": True,
            "default": "cpu"
        },
        "--quantization": {
            "dest": "quantization",
            "value": True,
            "default": None
        },
        "--quantization-config": {
            "dest": "quantization_config",
            "value": True,
            "default": None
        },
        "--ray-workers-use-nsight": {
            "dest": "ray_workers_use_nsight",
            "value": False,
            "default": False
        },
        "--reasoning-config": {
            "dest": "reasoning_config",
            "value": True,
            "default": None
        },
        "--reasoning-parser": {
            "dest": "reasoning_parser",
            "value": True,
            "default": ""
        },
        "--reasoning-parser-plugin": {
            "dest": "reasoning_parser_plugin",
            "value": True,
            "default": ""
        },
        "--renderer-num-workers": {
            "dest": "renderer_num_workers",
            "value": True,
            "default": 1,
            "type": "int"
        },
        "--replayssm-buffer-len": {
            "dest": "replayssm_buffer_len",
            "value": True,
            "default": 16,
            "type": "int",
            "bounds": {
                "gt": 0
            }
        },
        "--response-role": {
            "dest": "response_role",
            "value": True,
            "default": "assistant"
        },
        "--return-sampling-mask": {
            "dest": "return_sampling_mask",
            "value": False,
            "default": False
        },
        "--return-tokens-as-token-ids": {
            "dest": "return_tokens_as_token_ids",
            "value": False,
            "default": False
        },
        "--revision": {
            "dest": "revision",
            "value": True,
            "default": None
        },
        "--root-path": {
            "dest": "root_path",
            "value": True,
            "default": None
        },
        "--runner": {
            "dest": "runner",
            "value": True,
            "default": "auto",
            "choices": [
                "auto",
                "draft",
                "generate",
                "pooling"
            ]
        },
        "--safetensors-load-strategy": {
            "dest": "safetensors_load_strategy",
            "value": True,
            "default": None,
            "choices": [
                "None",
                "eager",
                "lazy",
                "prefetch",
                "torchao"
            ]
        },
        "--safetensors-prefetch-block-size": {
            "dest": "safetensors_prefetch_block_size",
            "value": True,
            "default": 16777216,
            "type": "human_int",
            "bounds": {
                "ge": 1
            }
        },
        "--safetensors-prefetch-num-threads": {
            "dest": "safetensors_prefetch_num_threads",
            "value": True,
            "default": 8,
            "type": "int",
            "bounds": {
                "ge": 1
            }
        },
        "--scheduler-cls": {
            "dest": "scheduler_cls",
            "value": True,
            "default": None
        },
        "--scheduler-reserve-full-isl": {
            "dest": "scheduler_reserve_full_isl",
            "value": False,
            "default": True
        },
        "--scheduling-policy": {
            "dest": "scheduling_policy",
            "value": True,
            "default": "fcfs",
            "choices": [
                "fcfs",
                "priority"
            ]
        },
        "--seed": {
            "dest": "seed",
            "value": True,
            "default": 0,
            "type": "int"
        },
        "--served-model-name": {
            "dest": "served_model_name",
            "value": True,
            "default": None
        },
        "--show-hidden-metrics-for-version": {
            "dest": "show_hidden_metrics_for_version",
            "value": True,
            "default": None
        },
        "--shutdown-timeout": {
            "dest": "shutdown_timeout",
            "value": True,
            "default": 0,
            "type": "int",
            "bounds": {
                "ge": 0
            }
        },
        "--skip-mm-profiling": {
            "dest": "skip_mm_profiling",
            "value": False,
            "default": False
        },
        "--skip-tokenizer-init": {
            "dest": "skip_tokenizer_init",
            "value": False,
            "default": False
        },
        "--sleep-mode-offload-cudagraph": {
            "dest": "sleep_mode_offload_cudagraph",
            "value": False,
            "default": False
        },
        "--sleep-preserve-parameter-names": {
            "dest": "sleep_preserve_parameter_names",
            "value": True
        },
        "--sparse-indexer-topk-backend": {
            "dest": "sparse_indexer_topk_backend",
            "value": True,
            "default": "auto",
            "choices": [
                "aiter",
                "auto",
                "cooperative",
                "deep_select",
                "flashinfer",
                "per_row",
                "persistent",
                "torch"
            ]
        },
        "--spec-method": {
            "dest": "spec_method",
            "value": True,
            "default": None,
            "choices": [
                "None",
                "bailing_hybrid_mtp",
                "bailing_hybrid_v3_mtp",
                "custom_class",
                "deepseek_mtp",
                "dflash",
                "dots3_note_mtp",
                "draft_model",
                "dspark",
                "eagle",
                "eagle3",
                "ernie_mtp",
                "exaone4_5_mtp",
                "exaone_moe_mtp",
                "extract_hidden_states",
                "gemma4_mtp",
                "glm4_moe_lite_mtp",
                "glm4_moe_mtp",
                "glm5_next_mtp",
                "glm_ocr_mtp",
                "hy_v3_mtp",
                "hy_v4_mtp",
                "inkling_mtp",
                "kimi_k3_mtp",
                "longcat_flash_mtp",
                "medusa",
                "mimo_mtp",
                "mimo_v2_mtp",
                "minimax_m3_mtp",
                "mlp_speculator",
                "mtp",
                "nemotron_h_mtp",
                "ngram",
                "ngram_gpu",
                "pangu_ultra_moe_mtp",
                "qwen3_5_mtp",
                "qwen3_next_mtp",
                "qwen4_exp_mtp",
                "step3p5_mtp",
                "suffix"
            ]
        },
        "--spec-model": {
            "dest": "spec_model",
            "value": True,
            "default": None
        },
        "--spec-tokens": {
            "dest": "spec_tokens",
            "value": True,
            "default": None,
            "type": "int"
        },
        "--specialize-active-lora": {
            "dest": "specialize_active_lora",
            "value": False,
            "default": False
        },
        "--speculative-config": {
            "dest": "speculative_config",
            "value": True,
            "default": None
        },
        "--sse-keep-alive-interval": {
            "dest": "sse_keep_alive_interval",
            "value": True,
            "default": 0,
            "type": "int"
        },
        "--ssl-ca-certs": {
            "dest": "ssl_ca_certs",
            "value": True,
            "default": None
        },
        "--ssl-cert-reqs": {
            "dest": "ssl_cert_reqs",
            "value": True,
            "default": 0,
            "type": "int"
        },
        "--ssl-certfile": {
            "dest": "ssl_certfile",
            "value": True,
            "default": None
        },
        "--ssl-ciphers": {
            "dest": "ssl_ciphers",
            "value": True,
            "default": None
        },
        "--ssl-keyfile": {
            "dest": "ssl_keyfile",
            "value": True,
            "default": None
        },
        "--stream-interval": {
            "dest": "stream_interval",
            "value": True,
            "default": 1,
            "type": "int",
            "bounds": {
                "ge": 1
            }
        },
        "--structured-outputs-config": {
            "dest": "structured_outputs_config",
            "value": True
        },
        "--swa-bounded-replay": {
            "dest": "swa_bounded_replay",
            "value": False,
            "default": True
        },
        "--tensor-parallel-size": {
            "dest": "tensor_parallel_size",
            "value": True,
            "default": 1,
            "type": "int",
            "bounds": {
                "ge": 1
            }
        },
        "--tokenizer": {
            "dest": "tokenizer",
            "value": True,
            "default": None
        },
        "--tokenizer-mode": {
            "dest": "tokenizer_mode",
            "value": True,
            "default": "auto"
        },
        "--tokenizer-revision": {
            "dest": "tokenizer_revision",
            "value": True,
            "default": None
        },
        "--tokens-only": {
            "dest": "tokens_only",
            "value": False,
            "default": False
        },
        "--tool-call-parser": {
            "dest": "tool_call_parser",
            "value": True,
            "default": None
        },
        "--tool-parser-plugin": {
            "dest": "tool_parser_plugin",
            "value": True,
            "default": ""
        },
        "--tool-server": {
            "dest": "tool_server",
            "value": True,
            "default": None
        },
        "--tool-strict-level": {
            "dest": "tool_strict_level",
            "value": True,
            "default": "auto",
            "choices": [
                "auto",
                "function",
                "parameter"
            ]
        },
        "--trust-remote-code": {
            "dest": "trust_remote_code",
            "value": False,
            "default": False
        },
        "--trust-request-chat-template": {
            "dest": "trust_request_chat_template",
            "value": False,
            "default": False
        },
        "--trust-request-mm-kwargs": {
            "dest": "trust_request_mm_kwargs",
            "value": False,
            "default": False
        },
        "--ubatch-size": {
            "dest": "ubatch_size",
            "value": True,
            "default": 0,
            "type": "int",
            "bounds": {
                "ge": 0
            }
        },
        "--uds": {
            "dest": "uds",
            "value": True,
            "default": None
        },
        "--use-fp64-gumbel": {
            "dest": "use_fp64_gumbel",
            "value": False,
            "default": False
        },
        "--use-replayssm": {
            "dest": "use_replayssm",
            "value": False,
            "default": False
        },
        "--use-tqdm-on-load": {
            "dest": "use_tqdm_on_load",
            "value": False,
            "default": True
        },
        "--uvicorn-log-level": {
            "dest": "uvicorn_log_level",
            "value": True,
            "default": "info",
            "choices": [
                "critical",
                "debug",
                "error",
                "info",
                "trace",
                "warning"
            ]
        },
        "--video-pruning-method": {
            "dest": "video_pruning_method",
            "value": True,
            "default": "evs",
            "choices": [
                "evs",
                "vidcom2"
            ]
        },
        "--video-pruning-rate": {
            "dest": "video_pruning_rate",
            "value": True,
            "default": None,
            "type": "float",
            "bounds": {
                "ge": 0.0,
                "lt": 1.0
            }
        },
        "--watermark": {
            "dest": "watermark",
            "value": True,
            "default": 0.0,
            "type": "float",
            "bounds": {
                "ge": 0.0,
                "lt": 1.0
            }
        },
        "--watermark-config": {
            "dest": "watermark_config",
            "value": True,
            "default": None
        },
        "--weight-transfer-config": {
            "dest": "weight_transfer_config",
            "value": True,
            "default": None
        },
        "--worker-cls": {
            "dest": "worker_cls",
            "value": True,
            "default": "auto"
        },
        "--worker-extension-cls": {
            "dest": "worker_extension_cls",
            "value": True,
            "default": ""
        }
    },
    "kv_cache_dtypes": [
        "auto",
        "bfloat16",
        "float16",
        "fp8",
        "fp8_ds_mla",
        "fp8_e4m3",
        "fp8_e5m2",
        "fp8_inc",
        "fp8_per_token_head",
        "int4_per_token_head",
        "int8_per_token_head",
        "nvfp4",
        "nvfp4_4over6",
        "nvfp4_ds_mla",
        "turboquant_3bit_nc",
        "turboquant_4bit_nc",
        "turboquant_k3v4_nc",
        "turboquant_k8v4",
        "ultraquant_4bit"
    ],
    "tool_parsers": [
        "apertus",
        "cohere_command3",
        "cohere_command4",
        "deepseek_v3",
        "deepseek_v31",
        "deepseek_v32",
        "deepseek_v4",
        "deepseek_v41",
        "dots",
        "ernie45",
        "functiongemma",
        "gemma4",
        "gigachat3",
        "glm45",
        "glm47",
        "granite",
        "granite-20b-fc",
        "granite4",
        "hermes",
        "hf",
        "hunyuan_a13b",
        "hy_v3",
        "hy_v4",
        "inkling",
        "internlm",
        "jamba",
        "k2_horizon",
        "kimi_k2",
        "kimi_k3",
        "lfm2",
        "ling3",
        "llama3_json",
        "llama4_json",
        "llama4_pythonic",
        "longcat",
        "mimo",
        "minicpm5",
        "minimax_m2",
        "minimax_m3",
        "mistral",
        "muse_glimmer",
        "olmo3",
        "openai",
        "phi4_mini_json",
        "plamo3",
        "poolside_v1",
        "pythonic",
        "qwen3_coder",
        "qwen3_json",
        "qwen3_xml",
        "seed_oss",
        "step3",
        "step3p5",
        "xlam"
    ],
    "reasoning_parsers": [
        "cohere_command3",
        "cohere_command4",
        "deepseek_r1",
        "deepseek_v3",
        "deepseek_v4",
        "deepseek_v41",
        "ernie45",
        "gemma4",
        "glm45",
        "glm47",
        "granite",
        "granite_thinking_parser",
        "hf",
        "holo2",
        "hunyuan_a13b",
        "hy_v3",
        "hy_v4",
        "inkling",
        "k2_horizon",
        "kimi_k2",
        "kimi_k3",
        "ling3",
        "mimo",
        "minicpmv",
        "minimax_m2",
        "minimax_m2_append_think",
        "minimax_m3",
        "mistral",
        "muse_glimmer",
        "nemotron_v3",
        "olmo3",
        "openai_gptoss",
        "plamo3",
        "poolside_v1",
        "qwen3",
        "seed_oss",
        "step3",
        "step3p5"
    ],
    "env_vars": [
        "CMAKE_BUILD_TYPE",
        "CUDA_HOME",
        "CUDA_VISIBLE_DEVICES",
        "FORCE_COLOR",
        "LD_LIBRARY_PATH",
        "LOCAL_RANK",
        "MAX_JOBS",
        "MOONCAKE_PREFERRED_SEGMENT",
        "MOONCAKE_REQUESTER_LOCAL_HOSTNAME",
        "NO_COLOR",
        "NVCC_THREADS",
        "S3_ACCESS_KEY_ID",
        "S3_ENDPOINT_URL",
        "S3_SECRET_ACCESS_KEY",
        "VERBOSE",
        "VLLM_ADAPTIVE_VERIFICATION_PROFILE_CONTEXT_LEN",
        "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE",
        "VLLM_ALLOW_INSECURE_SERIALIZATION",
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN",
        "VLLM_ALLOW_RUNTIME_LORA_UPDATING",
        "VLLM_ALLREDUCE_USE_FLASHINFER",
        "VLLM_ALLREDUCE_USE_FLASHINFER_PCIE_IPC",
        "VLLM_ALLREDUCE_USE_SYMM_MEM",
        "VLLM_API_KEY",
        "VLLM_ASSETS_CACHE",
        "VLLM_ASSETS_CACHE_MODEL_CLEAN",
        "VLLM_AUDIO_FETCH_TIMEOUT",
        "VLLM_B12X_MOE_FP4_FORCE_A16",
        "VLLM_BATCH_INVARIANT",
        "VLLM_BLOCKSCALE_FP8_GEMM_FLASHINFER",
        "VLLM_BUILD_COMMIT",
        "VLLM_BUILD_PIPELINE",
        "VLLM_BUILD_URL",
        "VLLM_CACHE_ROOT",
        "VLLM_CHAT_TEMPLATE_RENDER_TIMEOUT",
        "VLLM_COMPILE_CACHE_SAVE_FORMAT",
        "VLLM_COMPUTE_NANS_IN_LOGITS",
        "VLLM_CONFIGURE_LOGGING",
        "VLLM_CONFIG_ROOT",
        "VLLM_CPU_ATTN_SPLIT_KV",
        "VLLM_CPU_CI_ENV",
        "VLLM_CPU_INT4_W4A8",
        "VLLM_CPU_KVCACHE_SPACE",
        "VLLM_CPU_NUM_OF_RESERVED_CPU",
        "VLLM_CPU_OMP_THREADS_BIND",
        "VLLM_CUDART_SO_PATH",
        "VLLM_CUDA_COMPATIBILITY_PATH",
        "VLLM_CUSTOM_SCOPES_FOR_PROFILING",
        "VLLM_DBO_COMM_SMS",
        "VLLM_DCP_Q_REPLICATE",
        "VLLM_DEBUG_DUMP_PATH",
        "VLLM_DEBUG_LOG_API_SERVER_RESPONSE",
        "VLLM_DEBUG_MFU_METRICS",
        "VLLM_DEBUG_WORKSPACE",
        "VLLM_DEEPEPLL_NVFP4_DISPATCH",
        "VLLM_DEEPEP_BUFFER_SIZE_MB",
        "VLLM_DEEPEP_HIGH_THROUGHPUT_FORCE_INTRA_NODE",
        "VLLM_DEEPEP_LOW_LATENCY_USE_MNNVL",
        "VLLM_DEEPEP_V2_ALLOW_HYBRID_MODE",
        "VLLM_DEEPEP_V2_ALLOW_MULTIPLE_REDUCTION",
        "VLLM_DEEPEP_V2_PREFER_OVERLAP",
        "VLLM_DEEP_GEMM_WARMUP",
        "VLLM_DISABLED_KERNELS",
        "VLLM_DISABLE_COMPILE_CACHE",
        "VLLM_DISABLE_DSV4_MEGAMOE_SHARED_EXPERT_FUSION",
        "VLLM_DISABLE_LOG_LOGO",
        "VLLM_DISABLE_PYNCCL",
        "VLLM_DISABLE_REQUEST_ID_RANDOMIZATION",
        "VLLM_DISABLE_SHARED_EXPERTS_STREAM",
        "VLLM_DISTRIBUTED_USE_SPLIT_GROUP",
        "VLLM_DOCKER_BUILD_CONTEXT",
        "VLLM_DO_NOT_TRACK",
        "VLLM_DP_MASTER_IP",
        "VLLM_DP_MASTER_PORT",
        "VLLM_DP_RANK",
        "VLLM_DP_RANK_LOCAL",
        "VLLM_DP_SIZE",
        "VLLM_EC_SIDE_CHANNEL_HOST",
        "VLLM_EC_SIDE_CHANNEL_PORT",
        "VLLM_ELASTIC_EP_DRAIN_REQUESTS",
        "VLLM_ELASTIC_EP_SCALE_UP_LAUNCH",
        "VLLM_ENABLE_COHERE_API",
        "VLLM_ENABLE_CUDAGRAPH_GC",
        "VLLM_ENABLE_CUDA_COMPATIBILITY",
        "VLLM_ENABLE_FLA_PACKED_RECURRENT_DECODE",
        "VLLM_ENABLE_GEMM_RS",
        "VLLM_ENABLE_HPC_OPS",
        "VLLM_ENABLE_INDUCTOR_COORDINATE_DESCENT_TUNING",
        "VLLM_ENABLE_INDUCTOR_MAX_AUTOTUNE",
        "VLLM_ENABLE_PREGRAD_PASSES",
        "VLLM_ENABLE_RESPONSES_API_STORE",
        "VLLM_ENABLE_STARTUP_PLAN",
        "VLLM_ENABLE_V1_MULTIPROCESSING",
        "VLLM_ENFORCE_STRICT_TOOL_CALLING",
        "VLLM_ENGINE_READY_TIMEOUT_S",
        "VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS",
        "VLLM_FASTSAFETENSORS_QUEUE_SIZE",
        "VLLM_FLASHINFER_ALLREDUCE_BACKEND",
        "VLLM_FLASHINFER_AUTOTUNE_CACHE_DIR",
        "VLLM_FLASHINFER_AUTOTUNE_SKIP_OPS",
        "VLLM_FLASHINFER_MOE_A2A_LOW_PRECISION_COMBINE",
        "VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE",
        "VLLM_FLOAT32_MATMUL_PRECISION",
        "VLLM_FORCE_AOT_LOAD",
        "VLLM_GC_DEBUG",
        "VLLM_GDN_DECODE_KERNEL",
        "VLLM_GPT_OSS_HARMONY_SYSTEM_INSTRUCTIONS",
        "VLLM_GPT_OSS_SYSTEM_TOOL_MCP_LABELS",
        "VLLM_GPU_NIC_PCIE_MAPPING",
        "VLLM_GPU_SYNC_CHECK",
        "VLLM_HAS_FLASHINFER_CUBIN",
        "VLLM_HOST_IP",
        "VLLM_HTTP_TIMEOUT_KEEP_ALIVE",
        "VLLM_HUMMING_INPUT_QUANT_CONFIG",
        "VLLM_HUMMING_MOE_GEMM_TYPE",
        "VLLM_HUMMING_ONLINE_QUANT_CONFIG",
        "VLLM_HUMMING_USE_F16_ACCUM",
        "VLLM_IMAGE_FETCH_TIMEOUT",
        "VLLM_IMAGE_TAG",
        "VLLM_KEEP_ALIVE_ON_ENGINE_DEATH",
        "VLLM_KIMI_K3_AUX_ATTN_RES_STREAM",
        "VLLM_KIMI_K3_GEMM_AR",
        "VLLM_KIMI_K3_SHARD_SP_SHARED_EXPERT",
        "VLLM_KV_CACHE_LAYOUT",
        "VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES",
        "VLLM_KV_OFFLOAD_MAX_BATCH_DESCRIPTORS",
        "VLLM_LOGGING_COLOR",
        "VLLM_LOGGING_CONFIG_PATH",
        "VLLM_LOGGING_LEVEL",
        "VLLM_LOGGING_PREFIX",
        "VLLM_LOGGING_STREAM",
        "VLLM_LOG_BATCHSIZE_INTERVAL",
        "VLLM_LOG_MODEL_INSPECTION",
        "VLLM_LOG_STATS_INTERVAL",
        "VLLM_LOOPBACK_IP",
        "VLLM_LORA_DISABLE_PDL",
        "VLLM_LORA_ENABLE_DUAL_STREAM",
        "VLLM_LORA_RESOLVER_CACHE_DIR",
        "VLLM_LORA_RESOLVER_HF_REPO_LIST",
        "VLLM_MAIN_CUDA_VERSION",
        "VLLM_MARLIN_INPUT_DTYPE",
        "VLLM_MARLIN_USE_ATOMIC_ADD",
        "VLLM_MAX_AUDIO_CLIP_FILESIZE_MB",
        "VLLM_MAX_AUDIO_DECODE_BYTES",
        "VLLM_MAX_AUDIO_DECODE_DURATION_S",
        "VLLM_MAX_AUDIO_PREPROCESS_WORKERS",
        "VLLM_MAX_BAD_WORDS_TOTAL_TOKENS",
        "VLLM_MAX_COMPLETION_PROMPTS",
        "VLLM_MAX_EMBED_DECODE_BYTES",
        "VLLM_MAX_IMAGE_PIXELS",
        "VLLM_MAX_MEDIA_DOWNLOAD_SIZE_MB",
        "VLLM_MAX_NUM_BAD_WORDS",
        "VLLM_MAX_N_SEQUENCES",
        "VLLM_MAX_STOP_STRINGS",
        "VLLM_MAX_TOKENS_PER_EXPERT_FP4_MOE",
        "VLLM_MEDIA_CACHE",
        "VLLM_MEDIA_CACHE_MAX_SIZE_MB",
        "VLLM_MEDIA_CACHE_TTL_HOURS",
        "VLLM_MEDIA_CONNECTOR",
        "VLLM_MEDIA_FETCH_MAX_RETRIES",
        "VLLM_MEDIA_LOADING_THREAD_COUNT",
        "VLLM_MEDIA_URL_ALLOW_REDIRECTS",
        "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS",
        "VLLM_MLA_DISABLE",
        "VLLM_MODEL_REDIRECT_PATH",
        "VLLM_MOE_ROUTING_SIMULATION_STRATEGY",
        "VLLM_MOE_SKIP_PADDING",
        "VLLM_MOE_USE_DEEP_GEMM",
        "VLLM_MOONCAKE_ABORT_REQUEST_TIMEOUT",
        "VLLM_MOONCAKE_BOOTSTRAP_PORT",
        "VLLM_MOONCAKE_CONNECTOR_TIMEOUT",
        "VLLM_MOONCAKE_DISK_STAGING_USABLE_RATIO",
        "VLLM_MOONCAKE_LOAD_RECV_THREADS",
        "VLLM_MOONCAKE_STORE_TIER_LOG",
        "VLLM_MQ_MAX_CHUNK_BYTES_MB",
        "VLLM_MSGPACK_ZERO_COPY_THRESHOLD",
        "VLLM_MULTI_STREAM_GEMM_TOKEN_THRESHOLD",
        "VLLM_MXFP4_EMULATION_DEQUANT_AT_LOAD",
        "VLLM_MXFP8_EMULATION_DEQUANT_AT_LOAD",
        "VLLM_NCCL_INCLUDE_PATH",
        "VLLM_NCCL_SO_PATH",
        "VLLM_NIC_SELECTION_VARS",
        "VLLM_NIXL_SIDE_CHANNEL_HOST",
        "VLLM_NIXL_SIDE_CHANNEL_PORT",
        "VLLM_NO_USAGE_STATS",
        "VLLM_NVTX_SCOPES_FOR_PROFILING",
        "VLLM_OBJECT_STORAGE_SHM_BUFFER_NAME",
        "VLLM_P2P_HANDSHAKE_TIMEOUT_S",
        "VLLM_P2P_IDLE_TIMEOUT_S",
        "VLLM_P2P_MAX_PEERS",
        "VLLM_P2P_SIDE_CHANNEL_HOST",
        "VLLM_P2P_SIDE_CHANNEL_PORT",
        "VLLM_PATTERN_MATCH_DEBUG",
        "VLLM_PLUGINS",
        "VLLM_PORT",
        "VLLM_PP_LAYER_PARTITION",
        "VLLM_PROCESS_NAME_PREFIX",
        "VLLM_RAISE_ON_LOGIT_NANS",
        "VLLM_RANDOMIZE_DP_DUMMY_INPUTS",
        "VLLM_RAY_BUNDLE_INDICES",
        "VLLM_RAY_DP_PACK_STRATEGY",
        "VLLM_RAY_DP_PLACEMENT_NODE_IPS",
        "VLLM_RAY_EXTRA_ENV_VARS_TO_COPY",
        "VLLM_RAY_EXTRA_ENV_VAR_PREFIXES_TO_COPY",
        "VLLM_RAY_PER_WORKER_GPUS",
        "VLLM_REGEX_COMPILATION_TIMEOUT_S",
        "VLLM_REPLICATE_EMBED",
        "VLLM_RINGBUFFER_WARNING_INTERVAL",
        "VLLM_ROCM_AITER_MEGA_MOE_FUSE_SHARED_EXPERTS",
        "VLLM_ROCM_AITER_MLA_ASM_PADDING",
        "VLLM_ROCM_AITER_MLA_DCP_VERIFY",
        "VLLM_ROCM_AITER_MOE_DISPATCH_POLICY",
        "VLLM_ROCM_FP8_MFMA_PAGE_ATTN",
        "VLLM_ROCM_FP8_PADDING",
        "VLLM_ROCM_MOE_PADDING",
        "VLLM_ROCM_MONO_DECODE",
        "VLLM_ROCM_QUICK_REDUCE_CAST_BF16_TO_FP16",
        "VLLM_ROCM_QUICK_REDUCE_MAX_SIZE_BYTES_MB",
        "VLLM_ROCM_QUICK_REDUCE_MIN_SIZE_BYTES_MB",
        "VLLM_ROCM_QUICK_REDUCE_QUANTIZATION",
        "VLLM_ROCM_QUICK_REDUCE_QUANTIZATION_MIN_SIZE_KB",
        "VLLM_ROCM_SHUFFLE_KV_CACHE_LAYOUT",
        "VLLM_ROCM_SLEEP_MEM_CHUNK_SIZE",
        "VLLM_ROCM_USE_AITER",
        "VLLM_ROCM_USE_AITER_CUSTOM_AR",
        "VLLM_ROCM_USE_AITER_FP4BMM",
        "VLLM_ROCM_USE_AITER_FP4_ASM_GEMM",
        "VLLM_ROCM_USE_AITER_FP8BMM",
        "VLLM_ROCM_USE_AITER_FUSION_SHARED_EXPERTS",
        "VLLM_ROCM_USE_AITER_LINEAR",
        "VLLM_ROCM_USE_AITER_LINEAR_HIPBMM",
        "VLLM_ROCM_USE_AITER_MHA",
        "VLLM_ROCM_USE_AITER_MLA",
        "VLLM_ROCM_USE_AITER_MOE",
        "VLLM_ROCM_USE_AITER_MOE_A4W4_DSV4",
        "VLLM_ROCM_USE_AITER_MOE_SITUV2",
        "VLLM_ROCM_USE_AITER_RMSNORM",
        "VLLM_ROCM_USE_AITER_TRITON_GEMM",
        "VLLM_ROCM_USE_AITER_TRITON_ROPE",
        "VLLM_ROCM_USE_AITER_TRITON_SPARSE_MLA",
        "VLLM_ROCM_USE_AITER_UNIFIED_ATTENTION",
        "VLLM_ROCM_USE_SKINNY_GEMM",
        "VLLM_RPC_BASE_PATH",
        "VLLM_RUST_FRONTEND_PATH",
        "VLLM_SERVER_DEV_MODE",
        "VLLM_SHARED_EXPERTS_STREAM_TOKEN_THRESHOLD",
        "VLLM_SKIP_MODEL_NAME_VALIDATION",
        "VLLM_SKIP_P2P_CHECK",
        "VLLM_SKIP_PRECOMPILED_VERSION_SUFFIX",
        "VLLM_SKIP_VERSION_SUFFIX",
        "VLLM_SPARSE_INDEXER_MAX_LOGITS_MB",
        "VLLM_SSM_CONV_STATE_LAYOUT",
        "VLLM_SYSTEM_START_DATE",
        "VLLM_TARGET_DEVICE",
        "VLLM_TEST_FORCE_LOAD_FORMAT",
        "VLLM_TOOL_JSON_ERROR_AUTOMATIC_RETRY",
        "VLLM_TOOL_PARSE_REGEX_TIMEOUT_SECONDS",
        "VLLM_TPU_USING_PATHWAYS",
        "VLLM_TRACE_FUNCTION",
        "VLLM_TRITON_FORCE_FIRST_CONFIG",
        "VLLM_TRITON_JIT_WARMUP_NUM_THREADS",
        "VLLM_TRITON_USE_TD",
        "VLLM_TUNED_CONFIG_FOLDER",
        "VLLM_USAGE_SOURCE",
        "VLLM_USAGE_STATS_SERVER",
        "VLLM_USE_AOT_COMPILE",
        "VLLM_USE_BREAKABLE_CUDAGRAPH",
        "VLLM_USE_BYTECODE_HOOK",
        "VLLM_USE_DEEP_GEMM",
        "VLLM_USE_DEEP_GEMM_E8M0",
        "VLLM_USE_DEEP_GEMM_TMA_ALIGNED_SCALES",
        "VLLM_USE_DIRECT_DCP_A2A",
        "VLLM_USE_DIRECT_DCP_KV_GATHER",
        "VLLM_USE_DIRECT_DCP_Q_GATHER",
        "VLLM_USE_EXPERIMENTAL_PARSER_CONTEXT",
        "VLLM_USE_FASTOKENS",
        "VLLM_USE_FLASHINFER_MOE_INT4",
        "VLLM_USE_FLASHINFER_SAMPLER",
        "VLLM_USE_FUSED_MOE_GROUPED_TOPK",
        "VLLM_USE_HW_AGNOSTIC",
        "VLLM_USE_LAYERNAME",
        "VLLM_USE_MEGA_AOT_ARTIFACT",
        "VLLM_USE_MODELSCOPE",
        "VLLM_USE_NCCL_SYMM_MEM",
        "VLLM_USE_OINK_OPS",
        "VLLM_USE_PRECOMPILED",
        "VLLM_USE_PRECOMPILED_RUST",
        "VLLM_USE_RAY_COMPILED_DAG_CHANNEL_TYPE",
        "VLLM_USE_RAY_COMPILED_DAG_OVERLAP_COMM",
        "VLLM_USE_RAY_V2_EXECUTOR_BACKEND",
        "VLLM_USE_RAY_WRAPPED_PP_COMM",
        "VLLM_USE_RUST_BENCH",
        "VLLM_USE_RUST_FRONTEND",
        "VLLM_USE_SIMPLE_KV_OFFLOAD",
        "VLLM_USE_SPINLOOP_EXT",
        "VLLM_USE_STANDALONE_COMPILE",
        "VLLM_USE_TRITON_AWQ",
        "VLLM_USE_V2_MODEL_RUNNER",
        "VLLM_V1_OUTPUT_PROC_CHUNK_SIZE",
        "VLLM_V1_USE_OUTLINES_CACHE",
        "VLLM_VIDEO_FETCH_TIMEOUT",
        "VLLM_VIDEO_LOADER_BACKEND",
        "VLLM_WEIGHT_OFFLOADING_DISABLE_PIN_MEMORY",
        "VLLM_WEIGHT_OFFLOADING_DISABLE_UVA",
        "VLLM_WORKER_MULTIPROC_METHOD",
        "VLLM_WORKER_SHUTDOWN_TIMEOUT_SECONDS",
        "VLLM_WSL2_ENABLE_PIN_MEMORY",
        "VLLM_XGRAMMAR_CACHE_MB",
        "VLLM_XLA_CACHE_PATH",
        "VLLM_XLA_CHECK_RECOMPILATION",
        "VLLM_XLA_USE_SPMD",
        "VLLM_XPU_FORCE_N_CONTIG_WEIGHT",
        "VLLM_XPU_INC_WNA16_BACKEND",
        "VLLM_XPU_PP_MICROBATCH",
        "VLLM_XPU_USE_SAMPLER_KERNEL",
        "VLLM_ZENTORCH_WEIGHT_PREPACK"
    ],
    "kv_connectors": [
        "DecodeBenchConnector",
        "ExampleConnector",
        "ExampleHiddenStatesConnector",
        "FlexKVConnectorV1",
        "HF3FSKVConnector",
        "HiSparseConnector",
        "LMCacheConnectorV1",
        "LMCacheMPConnector",
        "MoRIIOConnector",
        "MooncakeConnector",
        "MooncakeStoreConnector",
        "MultiConnector",
        "NixlConnector",
        "NixlPullConnector",
        "NixlPushConnector",
        "OffloadingConnector",
        "SimpleCPUOffloadConnector"
    ],
    "preload_options": [
        "--additional-config",
        "--aggregate-engine-logging",
        "--all2all-backend",
        "--allow-deprecated-quantization",
        "--allowed-local-media-path",
        "--allowed-media-domains",
        "--async-scheduling",
        "--attention-backend",
        "--attention-config",
        "--aux-output-config",
        "--block-size",
        "--code-revision",
        "--collect-detailed-traces",
        "--compilation-config",
        "--config-format",
        "--convert",
        "--cp-kv-cache-interleave-size",
        "--cpu-distributed-timeout-seconds",
        "--cpu-offload-gb",
        "--cpu-offload-params",
        "--cudagraph-capture-sizes",
        "--cudagraph-metrics",
        "--custom-histogram-buckets",
        "--data-parallel-address",
        "--data-parallel-backend",
        "--data-parallel-external-lb",
        "--data-parallel-hybrid-lb",
        "--data-parallel-multi-port-external-lb",
        "--data-parallel-rank",
        "--data-parallel-rpc-port",
        "--data-parallel-size",
        "--data-parallel-size-local",
        "--data-parallel-start-rank",
        "--dbo-decode-token-threshold",
        "--dbo-prefill-token-threshold",
        "--dcp-comm-backend",
        "--dcp-kv-cache-interleave-size",
        "--dcp-q-replicate",
        "--decode-context-parallel-size",
        "--default-mm-loras",
        "--device-ids",
        "--device-memory-utilization",
        "--diffusion-config",
        "--disable-cascade-attn",
        "--disable-chunked-mm-input",
        "--disable-custom-all-reduce",
        "--disable-hybrid-kv-cache-manager",
        "--disable-log-stats",
        "--disable-nccl-for-dp-synchronization",
        "--disable-sliding-window",
        "--distributed-executor-backend",
        "--distributed-timeout-seconds",
        "--download-dir",
        "--dp-sync-interval",
        "--dtype",
        "--ec-manager-config",
        "--ec-transfer-config",
        "--elastic-ep-max-dp-size",
        "--enable-batch-sharded-sampling",
        "--enable-chunked-prefill",
        "--enable-cumem-allocator",
        "--enable-dbo",
        "--enable-elastic-ep",
        "--enable-ep-weight-filter",
        "--enable-eplb",
        "--enable-expert-parallel",
        "--enable-fault-tolerance",
        "--enable-flashinfer-autotune",
        "--enable-hc-sp",
        "--enable-layerwise-nvtx-tracing",
        "--enable-logging-iteration-details",
        "--enable-lora",
        "--enable-mamba-cache-stochastic-rounding",
        "--enable-mamba-shared-prefix-checkpoint",
        "--enable-mfu-metrics",
        "--enable-mixed-moe-lora-format",
        "--enable-mm-embeds",
        "--enable-moe-shared-loras",
        "--enable-nccl-comm-suspend",
        "--enable-prefix-caching",
        "--enable-prompt-embeds",
        "--enable-return-routed-experts",
        "--enable-shm-tensor-arena",
        "--enable-sleep-mode",
        "--enable-tower-connector-lora",
        "--enable-trace-replay",
        "--enforce-eager",
        "--engram-config",
        "--eplb-config",
        "--expert-placement-strategy",
        "--fail-on-environ-validation",
        "--fault-tolerance-config",
        "--fully-sharded-loras",
        "--gdn-prefill-backend",
        "--generation-config",
        "--gpu-memory-utilization",
        "--hf-config-path",
        "--hf-overrides",
        "--hf-token",
        "--ignore-patterns",
        "--interleave-mm-strings",
        "--io-processor-plugin",
        "--ir-op-priority",
        "--jit-monitor-mode",
        "--jit-monitor-verbose",
        "--kda-decode-backend",
        "--kda-prefill-backend",
        "--kernel-config",
        "--kv-cache-dtype",
        "--kv-cache-dtype-skip-layers",
        "--kv-cache-memory-bytes",
        "--kv-cache-metrics",
        "--kv-cache-metrics-sample",
        "--kv-events-config",
        "--kv-offloading-backend",
        "--kv-offloading-size",
        "--kv-sharing-fast-prefill",
        "--kv-transfer-config",
        "--language-model-only",
        "--limit-mm-per-prompt",
        "--linear-backend",
        "--load-format",
        "--log-config-file",
        "--log-level",
        "--logging-config",
        "--logits-processors",
        "--logprobs-mode",
        "--long-prefill-token-threshold",
        "--long-prefill-token-threshold-adaptive",
        "--lora-dtype",
        "--lora-target-modules",
        "--mamba-backend",
        "--mamba-block-size",
        "--mamba-cache-dtype",
        "--mamba-cache-mode",
        "--mamba-cache-philox-rounds",
        "--mamba-ssm-cache-dtype",
        "--mamba-ssu-algorithm",
        "--master-addr",
        "--master-port",
        "--max-cpu-loras",
        "--max-cudagraph-capture-size",
        "--max-logprobs",
        "--max-lora-cls-labels",
        "--max-lora-rank",
        "--max-loras",
        "--max-model-len",
        "--max-num-active-seqs",
        "--max-num-batched-tokens",
        "--max-num-queued-reqs",
        "--max-num-queued-tokens",
        "--max-num-scheduled-tokens",
        "--max-num-seqs",
        "--max-parallel-loading-workers",
        "--media-io-kwargs",
        "--mm-device-do-normalize",
        "--mm-encoder-attn-backend",
        "--mm-encoder-attn-dtype",
        "--mm-encoder-fp8-scale-path",
        "--mm-encoder-fp8-scale-save-margin",
        "--mm-encoder-fp8-scale-save-path",
        "--mm-encoder-only",
        "--mm-encoder-tp-mode",
        "--mm-hasher-algorithm",
        "--mm-ipc-gpu-memory-gb",
        "--mm-processor-cache-gb",
        "--mm-processor-cache-type",
        "--mm-processor-device",
        "--mm-processor-kwargs",
        "--mm-shm-cache-max-object-size-mb",
        "--mm-tensor-ipc",
        "--model",
        "--model-class-overrides",
        "--model-impl",
        "--model-loader-extra-config",
        "--moe-backend",
        "--nnodes",
        "--no-allow-deprecated-quantization",
        "--no-async-scheduling",
        "--no-cudagraph-metrics",
        "--no-data-parallel-external-lb",
        "--no-data-parallel-hybrid-lb",
        "--no-dcp-q-replicate",
        "--no-disable-cascade-attn",
        "--no-disable-chunked-mm-input",
        "--no-disable-custom-all-reduce",
        "--no-disable-hybrid-kv-cache-manager",
        "--no-disable-nccl-for-dp-synchronization",
        "--no-disable-sliding-window",
        "--no-enable-batch-sharded-sampling",
        "--no-enable-chunked-prefill",
        "--no-enable-cumem-allocator",
        "--no-enable-dbo",
        "--no-enable-elastic-ep",
        "--no-enable-ep-weight-filter",
        "--no-enable-eplb",
        "--no-enable-expert-parallel",
        "--no-enable-fault-tolerance",
        "--no-enable-flashinfer-autotune",
        "--no-enable-hc-sp",
        "--no-enable-layerwise-nvtx-tracing",
        "--no-enable-logging-iteration-details",
        "--no-enable-lora",
        "--no-enable-mamba-cache-stochastic-rounding",
        "--no-enable-mamba-shared-prefix-checkpoint",
        "--no-enable-mfu-metrics",
        "--no-enable-mixed-moe-lora-format",
        "--no-enable-mm-embeds",
        "--no-enable-moe-shared-loras",
        "--no-enable-nccl-comm-suspend",
        "--no-enable-prefix-caching",
        "--no-enable-prompt-embeds",
        "--no-enable-return-routed-experts",
        "--no-enable-shm-tensor-arena",
        "--no-enable-sleep-mode",
        "--no-enable-tower-connector-lora",
        "--no-enable-trace-replay",
        "--no-enforce-eager",
        "--no-fail-on-environ-validation",
        "--no-fully-sharded-loras",
        "--no-interleave-mm-strings",
        "--no-jit-monitor-verbose",
        "--no-kv-cache-metrics",
        "--no-kv-sharing-fast-prefill",
        "--no-language-model-only",
        "--no-long-prefill-token-threshold-adaptive",
        "--no-mm-device-do-normalize",
        "--no-mm-encoder-only",
        "--no-numa-bind",
        "--no-ray-workers-use-nsight",
        "--no-return-sampling-mask",
        "--no-scheduler-reserve-full-isl",
        "--no-skip-mm-profiling",
        "--no-skip-tokenizer-init",
        "--no-sleep-mode-offload-cudagraph",
        "--no-specialize-active-lora",
        "--no-swa-bounded-replay",
        "--no-trust-remote-code",
        "--no-use-fp64-gumbel",
        "--no-use-replayssm",
        "--no-use-tqdm-on-load",
        "--node-rank",
        "--num-gpu-blocks-override",
        "--numa-bind",
        "--numa-bind-cpus",
        "--numa-bind-nodes",
        "--offload-backend",
        "--offload-group-size",
        "--offload-num-in-group",
        "--offload-params",
        "--offload-prefetch-step",
        "--optimization-level",
        "--otlp-traces-endpoint",
        "--override-generation-config",
        "--per-request-spec-decode-metrics",
        "--performance-mode",
        "--pipeline-parallel-size",
        "--pooler-config",
        "--prefill-context-parallel-size",
        "--prefill-schedule-interval",
        "--prefix-cache-retention-interval",
        "--prefix-caching-hash-algo",
        "--prefix-match-unit",
        "--profiler-config",
        "--pt-load-map-location",
        "--quantization",
        "--quantization-config",
        "--ray-workers-use-nsight",
        "--reasoning-config",
        "--reasoning-parser",
        "--reasoning-parser-plugin",
        "--renderer-num-workers",
        "--replayssm-buffer-len",
        "--return-sampling-mask",
        "--revision",
        "--runner",
        "--safetensors-load-strategy",
        "--safetensors-prefetch-block-size",
        "--safetensors-prefetch-num-threads",
        "--scheduler-cls",
        "--scheduler-reserve-full-isl",
        "--scheduling-policy",
        "--seed",
        "--served-model-name",
        "--show-hidden-metrics-for-version",
        "--shutdown-timeout",
        "--skip-mm-profiling",
        "--skip-tokenizer-init",
        "--sleep-mode-offload-cudagraph",
        "--sleep-preserve-parameter-names",
        "--sparse-indexer-topk-backend",
        "--spec-method",
        "--spec-model",
        "--spec-tokens",
        "--specialize-active-lora",
        "--speculative-config",
        "--stream-interval",
        "--structured-outputs-config",
        "--swa-bounded-replay",
        "--tensor-parallel-size",
        "--tokenizer",
        "--tokenizer-mode",
        "--tokenizer-revision",
        "--trust-remote-code",
        "--ubatch-size",
        "--use-fp64-gumbel",
        "--use-replayssm",
        "--use-tqdm-on-load",
        "--video-pruning-method",
        "--video-pruning-rate",
        "--watermark",
        "--watermark-config",
        "--weight-cache-draft-master-port",
        "--weight-cache-health-host",
        "--weight-cache-health-port",
        "--weight-cache-master-port",
        "--weight-cache-socket-dir",
        "--weight-transfer-config",
        "--worker-cls",
        "--worker-extension-cls"
    ]
}
