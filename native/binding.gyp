{
  "targets": [
    {
      "target_name": "clustersim_native",
      "sources": [
        "src/addon.cc",
        "src/convert.cc",
        "src/cpu_pool.cc",
        "src/cpu_gemm.cc",
        "src/cpu_bench.cc",
        "src/cpu_collectives.cc",
        "src/cpu_program.cc",
        "src/cuda_loader.cc",
        "src/cuda_bench.cc",
        "src/cuda_device.cc",
        "src/cuda_nccl.cc"
      ],
      "include_dirs": [
        "<!(node -p \"require('path').dirname(require.resolve('node-addon-api/package.json'))\")"
      ],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS"],
      "cflags!": ["-fno-exceptions", "-fno-rtti"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti"],
      "cflags_cc": ["-std=c++17", "-O3", "-fexceptions", "-Wall", "-Wno-unused-function", "-Wno-psabi"],
      "libraries": ["-ldl", "-lpthread"],
      "conditions": [
        ["OS=='mac'", {
          "xcode_settings": { "GCC_ENABLE_CPP_EXCEPTIONS": "YES", "CLANG_CXX_LANGUAGE_STANDARD": "c++17" }
        }]
      ]
    }
  ]
}
