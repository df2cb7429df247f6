/// The version `systole --version` prints.
public enum SystoleVersion {
    /// Semantic version of this build.
    public static let current = "0.1.0"
}
