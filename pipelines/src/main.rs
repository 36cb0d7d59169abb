//! The `epigraph` command line.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = epigraph::cli::Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
                tracing_subscriber::EnvFilter::new(
                    "info,lance=warn,lancedb=warn,neo4rs=warn,rdkafka=warn",
                )
            }),
        )
        .with_writer(std::io::stderr)
        .init();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    match runtime.block_on(epigraph::cli::execute(cli)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("epigraph: error: {}", epigraph::cli::describe(&error));
            std::process::ExitCode::FAILURE
        }
    }
}
