fn main() -> std::process::ExitCode {
    server::cli::run()
}
