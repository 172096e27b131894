struct BenchRow {
    var name: String; var value: Double; var unit: String; var reference: String;
    var referenceValue: Double?; var ratio: Double?; var target: String; var met: Bool
}
