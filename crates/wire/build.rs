//! Compiles `proto/inference.proto` (the OIP v2 gRPC service) into Rust with a pure-Rust
//! protobuf compiler (protox): no `protoc` binary is needed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/inference.proto");
    let fds = protox::compile(["proto/inference.proto"], ["proto"])?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_fds(fds)?;
    Ok(())
}
