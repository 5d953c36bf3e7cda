// The ns-3 side of `tinygram bench sim --flows N --against ns3`: the same
// many-flow request/response workload as tinygram's built-in many-flow
// benchmark, so that both simulators' CPU times can be compared on identical
// work.
//
// A dumbbell: `hosts` client hosts and one server host, each behind an access
// link (10 Gb/s, 50 us, 256 KB drop-tail: tinygram's `[link]` defaults) to
// its router, the two routers joined by the bottleneck (10 Gb/s, 1 ms each
// way, 64 MB drop-tail, no queue disc). `flows` connections open one every
// 1 s / flows from client port 1024 upwards (60,000 per client host, as in
// tinygram); each sends a 100-byte request, the server answers 100 bytes
// after 1 s of think time, and the client sends the next request when the
// response has arrived, `requests` times, then closes. TCP as tinygram's
// "rfc" profile: NewReno, Nagle on, MSS 1460, no options (no window
// scaling, timestamps or SACK), 64 KiB buffers, delayed ACK every 2nd
// segment or 200 ms, initial window 10, RTO floor and initial RTO 1 s.
//
// Output is one `key value` pair per line, read by tinygram:
//   segments       TCP segments the end hosts transmitted (all of them, pure ACKs included)
//   transactions   responses the clients received in full
//   sim_time_s     simulated time when the last connection finished its requests
//   wall_s         wall-clock seconds spent in Simulator::Run()
//   cpu_s          CPU seconds this process spent in Simulator::Run()
//
// Build (Debian: apt-get install libns3-dev):
//   g++ -O2 -std=c++17 -o ns3-flows flows.cc -lns3-core -lns3-network \
//       -lns3-internet -lns3-point-to-point -lns3-applications -lns3-traffic-control

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <unordered_map>

using namespace ns3;

namespace
{
const uint32_t kRequest = 100;
const uint32_t kResponse = 100;
const uint16_t kPort = 7;
const uint32_t kPortsPerHost = 60000;

uint64_t g_segments = 0;
uint64_t g_transactions = 0;
uint64_t g_flowsDone = 0;
uint64_t g_flows = 0;
uint64_t g_requests = 0;
double g_doneAt = -1.0;
Time g_think = Seconds(1);

/// Bytes a server socket has read and requests it has answered.
struct ServerConn
{
    uint64_t read = 0;
    uint64_t served = 0;
};

/// Bytes a client socket has read and responses it has completed.
struct ClientConn
{
    uint64_t read = 0;
    uint64_t done = 0;
};

std::unordered_map<Socket*, ServerConn> g_server;
std::unordered_map<Socket*, ClientConn> g_client;

void
OnHostTx(Ptr<const Packet>)
{
    ++g_segments;
}

void
SendBytes(Ptr<Socket> s, uint32_t n)
{
    if (s->Send(Create<Packet>(n)) < 0)
    {
        std::fprintf(stderr, "error: a %u-byte write did not fit in the send buffer\n", n);
        std::exit(2);
    }
}

void
ServerRecv(Ptr<Socket> s)
{
    ServerConn& c = g_server[PeekPointer(s)];
    Ptr<Packet> p;
    while ((p = s->Recv()))
    {
        c.read += p->GetSize();
    }
    while (c.read >= (c.served + 1) * kRequest)
    {
        ++c.served;
        Simulator::Schedule(g_think, &SendBytes, s, kResponse);
    }
}

void
ServerClosed(Ptr<Socket> s)
{
    g_server.erase(PeekPointer(s));
    s->Close();
}

void
ServerAccept(Ptr<Socket> s, const Address&)
{
    g_server[PeekPointer(s)] = ServerConn{};
    s->SetRecvCallback(MakeCallback(&ServerRecv));
    s->SetCloseCallbacks(MakeCallback(&ServerClosed), MakeCallback(&ServerClosed));
}

void
ClientRecv(Ptr<Socket> s)
{
    ClientConn& c = g_client[PeekPointer(s)];
    Ptr<Packet> p;
    while ((p = s->Recv()))
    {
        c.read += p->GetSize();
    }
    while (c.read >= (c.done + 1) * kResponse && c.done < g_requests)
    {
        ++c.done;
        ++g_transactions;
        if (c.done < g_requests)
        {
            SendBytes(s, kRequest);
        }
        else
        {
            s->Close();
            if (++g_flowsDone == g_flows)
            {
                g_doneAt = Simulator::Now().GetSeconds();
            }
        }
    }
}

void
ClientConnected(Ptr<Socket> s)
{
    SendBytes(s, kRequest);
}

void
ClientFailed(Ptr<Socket>)
{
    std::fprintf(stderr, "error: a connection failed to open\n");
    std::exit(2);
}

void
OpenFlow(Ptr<Node> host, uint16_t port, Ipv4Address server)
{
    Ptr<Socket> s = Socket::CreateSocket(host, TcpSocketFactory::GetTypeId());
    if (s->Bind(InetSocketAddress(Ipv4Address::GetAny(), port)) != 0)
    {
        std::fprintf(stderr, "error: cannot bind client port %u\n", port);
        std::exit(2);
    }
    g_client[PeekPointer(s)] = ClientConn{};
    s->SetRecvCallback(MakeCallback(&ClientRecv));
    s->SetConnectCallback(MakeCallback(&ClientConnected), MakeCallback(&ClientFailed));
    s->Connect(InetSocketAddress(server, kPort));
}
} // namespace

int
main(int argc, char* argv[])
{
    uint64_t flows = 1000;
    uint64_t requests = 10;
    CommandLine cmd(__FILE__);
    cmd.AddValue("flows", "request/response connections", flows);
    cmd.AddValue("requests", "requests per connection", requests);
    cmd.Parse(argc, argv);
    if (flows == 0 || requests == 0 || flows > 10000000 || requests > 1000000)
    {
        std::fprintf(stderr, "error: flows must be 1..10000000 and requests 1..1000000\n");
        return 2;
    }
    g_flows = flows;
    g_requests = requests;
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(1);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1460));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(65536));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(65536));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocket::TcpNoDelay", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));

    const uint64_t hosts = (flows + kPortsPerHost - 1) / kPortsPerHost;
    NodeContainer clients;
    clients.Create(hosts);
    NodeContainer routers;
    routers.Create(2);
    Ptr<Node> server = CreateObject<Node>();
    InternetStackHelper stack;
    stack.Install(clients);
    stack.Install(routers);
    stack.Install(server);

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
    access.SetChannelAttribute("Delay", StringValue("50us"));
    access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize("256KB")));
    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
    bottleneck.SetChannelAttribute("Delay", StringValue("1ms"));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize("64MB")));

    TrafficControlHelper tch;
    Ipv4AddressHelper addr;
    char net[32];
    uint32_t subnet = 0;
    auto connect = [&](PointToPointHelper& h, Ptr<Node> a, Ptr<Node> b) {
        NetDeviceContainer d = h.Install(a, b);
        std::snprintf(net, sizeof net, "10.%u.%u.0", (subnet >> 8) & 0xff, subnet & 0xff);
        ++subnet;
        addr.SetBase(net, "255.255.255.0");
        Ipv4InterfaceContainer ifs = addr.Assign(d);
        // Only the devices' drop-tail queues, as in tinygram's link model.
        tch.Uninstall(d);
        return std::make_pair(d, ifs);
    };
    for (uint64_t h = 0; h < hosts; ++h)
    {
        auto link = connect(access, clients.Get(h), routers.Get(0));
        link.first.Get(0)->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&OnHostTx));
    }
    connect(bottleneck, routers.Get(0), routers.Get(1));
    auto srv = connect(access, server, routers.Get(1));
    srv.first.Get(0)->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&OnHostTx));
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    Ipv4Address serverAddr = srv.second.GetAddress(0);

    Ptr<Socket> listener = Socket::CreateSocket(server, TcpSocketFactory::GetTypeId());
    listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), kPort));
    listener->Listen();
    listener->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                MakeCallback(&ServerAccept));

    const uint64_t intervalNs = std::max<uint64_t>(1000000000ULL / flows, 1);
    for (uint64_t i = 0; i < flows; ++i)
    {
        Ptr<Node> host = clients.Get(i / kPortsPerHost);
        uint16_t port = static_cast<uint16_t>(1024 + i % kPortsPerHost);
        Simulator::Schedule(NanoSeconds(i * intervalNs), &OpenFlow, host, port, serverAddr);
    }
    Simulator::Stop(Seconds(static_cast<double>(requests) * 2 + 60));

    auto started = std::chrono::steady_clock::now();
    std::clock_t cpuStarted = std::clock();
    Simulator::Run();
    double cpu = static_cast<double>(std::clock() - cpuStarted) / CLOCKS_PER_SEC;
    double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    Simulator::Destroy();

    std::printf("segments %llu\n", static_cast<unsigned long long>(g_segments));
    std::printf("transactions %llu\n", static_cast<unsigned long long>(g_transactions));
    std::printf("sim_time_s %.6f\n", g_doneAt);
    std::printf("wall_s %.6f\n", wall);
    std::printf("cpu_s %.6f\n", cpu);
    if (g_transactions < flows * requests)
    {
        std::fprintf(stderr, "error: only %llu of %llu transactions completed\n",
                     static_cast<unsigned long long>(g_transactions),
                     static_cast<unsigned long long>(flows * requests));
        return 1;
    }
    return 0;
}
