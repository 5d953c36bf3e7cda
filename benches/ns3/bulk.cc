// The ns-3 side of `tinygram bench sim --against ns3`: the same bulk transfer
// as tinygram's built-in benchmark scenario, so that both simulators' wall
// times can be compared on identical work.
//
// Two nodes joined by one point-to-point link (10 Gb/s, 1 ms each way), a
// drop-tail device queue measured in bytes and no queue disc in front of it,
// TCP NewReno with classic (non-PRR) recovery, timestamps, SACK and window
// scaling, 4 MiB socket buffers, Nagle on, delayed ACK every 2nd segment or
// 200 ms, RTO floor 200 ms; the sender writes `writeSize`-byte chunks until
// `bytes` are written. Optional random loss of packets arriving at the
// receiver (data direction only).
//
// Output is one `key value` pair per line, read by tinygram:
//   data_segments  data-carrying segments the sender transmitted (retransmissions included)
//   received       bytes the receiving application read
//   sim_time_s     simulated time when the last byte was read
//   wall_s         wall-clock seconds spent in Simulator::Run()
//   cpu_s          CPU seconds this process spent in Simulator::Run()
//   user_s, sys_s  the same split into user and system time (getrusage)
//
// Build (Debian: apt-get install libns3-dev):
//   g++ -O2 -std=c++17 -o ns3-bulk bulk.cc -lns3-core -lns3-network \
//       -lns3-internet -lns3-point-to-point -lns3-applications -lns3-traffic-control

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <sys/resource.h>

using namespace ns3;

namespace
{
uint64_t g_dataSegments = 0;
uint64_t g_received = 0;
uint64_t g_target = 0;
double g_doneAt = -1.0;

void
OnTx(Ptr<const Packet> p, const TcpHeader&, Ptr<const TcpSocketBase>)
{
    // The trace sees the payload before the TCP header is added.
    if (p->GetSize() > 0)
    {
        ++g_dataSegments;
    }
}

void
OnRx(Ptr<const Packet> p, const Address&)
{
    g_received += p->GetSize();
    if (g_received >= g_target && g_doneAt < 0)
    {
        g_doneAt = Simulator::Now().GetSeconds();
        Simulator::Stop();
    }
}

void
HookSender(Ptr<BulkSendApplication> app)
{
    Ptr<Socket> s = app->GetSocket();
    if (!s || !s->TraceConnectWithoutContext("Tx", MakeCallback(&OnTx)))
    {
        std::fprintf(stderr, "error: cannot trace the sender's TCP socket\n");
        std::exit(2);
    }
}
} // namespace

int
main(int argc, char* argv[])
{
    uint64_t bytes = 500000000;
    uint32_t buf = 4 << 20;
    uint32_t writeSize = 1448;
    uint32_t segmentSize = 1448;
    double loss = 0.0;
    std::string rate = "10Gbps";
    std::string delay = "1ms";
    std::string queue = "4500000B";
    uint32_t seed = 1;

    CommandLine cmd(__FILE__);
    cmd.AddValue("bytes", "bytes to transfer", bytes);
    cmd.AddValue("buf", "send and receive buffer, bytes", buf);
    cmd.AddValue("writeSize", "bytes per application write", writeSize);
    cmd.AddValue("segmentSize", "payload bytes per full segment (options excluded)", segmentSize);
    cmd.AddValue("loss", "probability a data packet is lost", loss);
    cmd.AddValue("rate", "link rate", rate);
    cmd.AddValue("delay", "one-way propagation delay", delay);
    cmd.AddValue("queue", "device queue limit (e.g. 4500000B)", queue);
    cmd.AddValue("seed", "RNG run number", seed);
    cmd.Parse(argc, argv);
    if (bytes == 0 || writeSize == 0 || segmentSize == 0 || buf == 0 || loss < 0.0 || loss >= 1.0)
    {
        std::fprintf(stderr,
                     "error: bytes, buf, writeSize and segmentSize must be positive and loss in "
                     "[0, 1)\n");
        return 2;
    }
    g_target = bytes;
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segmentSize));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(buf));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(buf));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocket::TcpNoDelay", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));

    NodeContainer nodes;
    nodes.Create(2);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue(rate));
    p2p.SetChannelAttribute("Delay", StringValue(delay));
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(queue)));
    NetDeviceContainer devs = p2p.Install(nodes);
    if (loss > 0.0)
    {
        Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
        em->SetAttribute("ErrorRate", DoubleValue(loss));
        em->SetAttribute("ErrorUnit", StringValue("ERROR_UNIT_PACKET"));
        devs.Get(1)->SetAttribute("ReceiveErrorModel", PointerValue(em));
    }

    InternetStackHelper stack;
    stack.Install(nodes);
    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.0");
    Ipv4InterfaceContainer ifs = addr.Assign(devs);
    // Only the device's drop-tail queue, as in tinygram's link model.
    TrafficControlHelper tch;
    tch.Uninstall(devs);

    const uint16_t port = 7;
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinkApps = sinkHelper.Install(nodes.Get(1));
    sinkApps.Start(Seconds(0));
    sinkApps.Get(0)->TraceConnectWithoutContext("Rx", MakeCallback(&OnRx));

    BulkSendHelper bulkHelper("ns3::TcpSocketFactory", InetSocketAddress(ifs.GetAddress(1), port));
    bulkHelper.SetAttribute("MaxBytes", UintegerValue(bytes));
    bulkHelper.SetAttribute("SendSize", UintegerValue(writeSize));
    ApplicationContainer bulkApps = bulkHelper.Install(nodes.Get(0));
    bulkApps.Start(Seconds(0));
    // The socket exists once the application has started; the first data
    // segment leaves a round trip later, so a hook 1 us in misses none.
    Simulator::Schedule(MicroSeconds(1),
                        &HookSender,
                        DynamicCast<BulkSendApplication>(bulkApps.Get(0)));
    Simulator::Stop(Seconds(3600));

    auto started = std::chrono::steady_clock::now();
    std::clock_t cpuStarted = std::clock();
    struct rusage ruStarted, ruEnded;
    getrusage(RUSAGE_SELF, &ruStarted);
    Simulator::Run();
    double cpu = static_cast<double>(std::clock() - cpuStarted) / CLOCKS_PER_SEC;
    getrusage(RUSAGE_SELF, &ruEnded);
    auto secs = [](const timeval& a, const timeval& b) {
        return static_cast<double>(b.tv_sec - a.tv_sec) + (b.tv_usec - a.tv_usec) * 1e-6;
    };
    double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    Simulator::Destroy();

    std::printf("data_segments %llu\n", static_cast<unsigned long long>(g_dataSegments));
    std::printf("received %llu\n", static_cast<unsigned long long>(g_received));
    std::printf("sim_time_s %.6f\n", g_doneAt);
    std::printf("wall_s %.6f\n", wall);
    std::printf("cpu_s %.6f\n", cpu);
    std::printf("user_s %.6f\n", secs(ruStarted.ru_utime, ruEnded.ru_utime));
    std::printf("sys_s %.6f\n", secs(ruStarted.ru_stime, ruEnded.ru_stime));
    if (g_received < bytes)
    {
        std::fprintf(stderr, "error: only %llu of %llu bytes arrived within 3600 s\n",
                     static_cast<unsigned long long>(g_received),
                     static_cast<unsigned long long>(bytes));
        return 1;
    }
    return 0;
}
